/* The loader: ONNX ModelProto bytes -> ir_graph. The only place that sees protobuf types.
 *
 * Untrusted input is expected. Decoding runs under a byte budget (protobuf-c's allocator is
 * metered), the schema subset q8rt compiles has no recursive messages (subgraph attributes,
 * sequence/map types are skipped as unknown fields, then refused by name), and every count and
 * dimension is checked before use. */
#ifndef Q8RT_LOADER_H
#define Q8RT_LOADER_H

#include "../graph/ir.h"

typedef struct q8rt_load_config {
  const q8rt_allocator *allocator;
  size_t max_unpack_bytes;       /* budget for protobuf-c's allocations while decoding */
  const char *external_data_dir; /* NULL: external data refused */
} q8rt_load_config;

/* The unpack budget when the caller gives none: 4x the encoded size + 1 MiB (as q8rt.h documents),
 * SIZE_MAX on overflow. */
size_t q8rt_default_unpack_budget(size_t encoded_size);

/* Decode a ModelProto and convert it into a new graph:
 * - opset imports (ai.onnx 10..22 accepted; other domains recorded, checked per op later),
 * - graph inputs (those that are also initializers become constants, not inputs), outputs,
 *   value_info shapes/dtypes, symbolic dims (dim_param or missing dim -> -1),
 * - initializers from raw_data, the typed fields, or external data (confined, see q8rt.h),
 * - nodes with attributes; nodes without names get "<op_type>_<index>",
 * - Constant nodes turned into constants (value, value_float(s), value_int(s)).
 * On failure *out is NULL and err names the node, initializer or field at fault. */
q8rt_status q8rt_load_graph(const void *data, size_t size, const q8rt_load_config *cfg, ir_graph **out,
                            q8rt_error *err);

/* Decode a standalone TensorProto (for q8rt_tensor_proto_decode). */
q8rt_status q8rt_load_tensor_proto(const void *bytes, size_t size, const q8rt_allocator *allocator,
                                   q8rt_tensor_info *info, void *data, size_t capacity, size_t *nbytes,
                                   q8rt_error *err);

#endif /* Q8RT_LOADER_H */
