/* Builds small ONNX models in memory for the unit tests, through the protobuf-c API (so the
 * bytes are what any ONNX writer would produce). */
#ifndef Q8RT_TEST_MODEL_BUILDER_H
#define Q8RT_TEST_MODEL_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct mb_model mb_model;

mb_model *mb_create(int64_t opset);
/* dims with -1 become the symbolic dimension "N". */
void mb_input(mb_model *m, const char *name, int dtype, int rank, const int64_t *dims);
void mb_output(mb_model *m, const char *name, int dtype);
void mb_initializer(mb_model *m, const char *name, int dtype, int rank, const int64_t *dims, const void *data,
                    size_t nbytes);
/* inputs/outputs are NULL-terminated lists; "" is an omitted optional input. */
void mb_node(mb_model *m, const char *op, const char *name, const char *const *inputs, const char *const *outputs);
/* The last node's domain (opset 1 of it imported; one such domain per model). */
void mb_domain(mb_model *m, const char *domain);
/* Attributes for the last node added. */
void mb_attr_int(mb_model *m, const char *name, int64_t v);
void mb_attr_ints(mb_model *m, const char *name, int n, const int64_t *v);
void mb_attr_string(mb_model *m, const char *name, const char *v);
/* A metadata_props entry; key and value are not copied and must outlive mb_pack. A NULL key or
 * value leaves that field unset. */
void mb_metadata(mb_model *m, const char *key, const void *value, size_t value_len);
/* Serialize; the caller frees the result with free(). */
uint8_t *mb_pack(mb_model *m, size_t *size);
void mb_free(mb_model *m);

/* A chain of `layers` 3x3 QLinearConv (pad 1, u8 activations, s8 per-channel weights, bias)
 * on a [N, c, h, w] uint8 input; N symbolic when batch < 0. */
uint8_t *mb_conv_chain(int layers, int64_t batch, int64_t c, int64_t h, int64_t w, size_t *size);
/* Weights of mb_conv_chain are drawn from [-mb_weight_limit - 1, mb_weight_limit] (default 127:
 * the full int8 range; 63 gives 7-bit weights like reduce_range's). */
extern int mb_weight_limit;

#endif
