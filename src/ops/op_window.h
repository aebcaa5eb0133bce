/* Window geometry shared by the convolution-like ops (QLinearConv, ConvInteger, Conv,
 * ConvTranspose, MaxPool, AveragePool): the kernel_shape / strides / dilations / pads / auto_pad
 * (and ceil_mode) attributes, checked and with errors naming the op, the node and the attribute,
 * and the output size and resolved pads of one spatial axis. */
#ifndef Q8RT_OP_WINDOW_H
#define Q8RT_OP_WINDOW_H

#include "op.h"

enum op_window_pad { OP_PAD_NOTSET, OP_PAD_VALID, OP_PAD_SAME_UPPER, OP_PAD_SAME_LOWER };

enum {
  OP_WINDOW_CEIL_MODE = 1,      /* read ceil_mode (pooling) */
  OP_WINDOW_SAME_UNDILATED = 2, /* refuse auto_pad SAME_* with dilations > 1, as ONNX Runtime does */
  OP_WINDOW_NONEMPTY = 4,       /* an empty output (auto_pad SAME_* on an empty input) is an error */
};

typedef struct op_window {
  int spatial; /* 1..3; 0 after a values-only check (op_window_parse with spatial 0) */
  int flags;   /* OP_WINDOW_* */
  /* ONNX axis order, axes past `spatial` are 1 (pads 0); kernel -1 where the weights' is unknown */
  int64_t kernel[3], stride[3], dilation[3];
  int64_t pads[6]; /* begin[spatial] then end[spatial], as the attribute; zero unless NOTSET */
  enum op_window_pad auto_pad;
  int64_t ceil_mode;
} op_window;

/* Reads the attributes of node n for `spatial` axes. The kernel is kernel_from_weights (spatial
 * values; -1 = unknown) checked against kernel_shape when both are there, else kernel_shape
 * (required then: the caller checks it is present). Every value must lie in [min, max_value]
 * (min 1, pads 0). With spatial 0 the lists are only range-checked, whatever their lengths. */
q8rt_status op_window_parse(const ir_node *n, int spatial, const int64_t *kernel_from_weights, int64_t max_value,
                            int flags, op_window *w, q8rt_error *err);

/* The window attributes as the model gives them, unchecked: what op_window_parse reads, for an op
 * that resolves its window only in infer (the spatial rank comes from the input). With a pool the
 * lists and auto_pad are copies in it (the params keep them past the IR); without, they point
 * into the node. Fails only on an attribute of the wrong type. */
typedef struct op_window_attrs {
  const int64_t *ints[4]; /* kernel_shape, strides, dilations, pads; NULL when absent */
  size_t len[4];
  const char *auto_pad;
  int64_t ceil_mode; /* read with OP_WINDOW_CEIL_MODE */
} op_window_attrs;
q8rt_status op_window_attrs_read(const ir_node *n, int flags, q8rt_pool *pool, op_window_attrs *a, q8rt_error *err);
/* op_window_parse on attributes read before. */
q8rt_status op_window_resolve(const op_window_attrs *a, const op_node *n, int spatial,
                              const int64_t *kernel_from_weights, int64_t max_value, int flags, op_window *w,
                              q8rt_error *err);

/* Output size along spatial axis `axis` (0-based, ONNX order) for input size `in`, with the
 * resolved begin and end pads (either pointer may be NULL). In or kernel unknown (< 0): *out = -1.
 * Fails naming the node when the dilated kernel is larger than the padded input. */
q8rt_status op_window_output(const op_window *w, const op_node *n, int axis, int64_t in, int64_t *out,
                             int64_t *pad_begin, int64_t *pad_end, q8rt_error *err);

/* A window op's per-axis geometry as its run reads it: the spatial axes right-aligned in 3 (1-D
 * uses [2], 2-D [1] and [2]); an axis the op does not have is 1 with no padding. */
typedef struct op_window_geom {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3]; /* input, output, kernel, stride, dilation, pads */
} op_window_geom;

/* Every axis 1, pads 0. */
void op_window_geom_init(op_window_geom *g);
/* Spatial axis `axis` (of w->spatial): input and output size, kernel, resolved pads, and w's
 * stride and dilation. */
void op_window_geom_axis(op_window_geom *g, const op_window *w, int axis, int64_t in, int64_t out, int64_t k,
                         int64_t pb, int64_t pe);

static inline int64_t op_window_in_plane(const op_window_geom *g) { return g->in[0] * g->in[1] * g->in[2]; }
static inline int64_t op_window_out_plane(const op_window_geom *g) { return g->out[0] * g->out[1] * g->out[2]; }
static inline int64_t op_window_taps(const op_window_geom *g) { return g->k[0] * g->k[1] * g->k[2]; }

#endif
