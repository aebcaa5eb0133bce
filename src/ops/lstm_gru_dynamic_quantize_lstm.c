/* LSTM, GRU and RNN (float32; forward, reverse, bidirectional; initial states; sequence_lens; peepholes;
 * clip; LSTM input_forget; GRU linear_before_reset; layout 0 and 1 (opset 14); the activation
 * functions ONNX Runtime's CPU kernels support).
 *
 * Arithmetic follows ONNX Runtime's DeepCPU kernels (deep_cpu_lstm.cc, deep_cpu_gru.cc) operation
 * by operation, so that results agree with ORT's bit for bit where its GEMMs accumulate the same way:
 *   xw[j] = sum_k x[k] * W[j][k]     per K block of 256 one fused multiply-add chain from 0, k
 *                                    ascending, blocks added in order (MLAS SGEMM, packed B)
 *   gate  = xw + h * R^T             (ORT's second GEMM runs with beta = 1: each block's sum is
 *                                    added onto xw)
 *   LSTM:  i/f/o: gate (+ c * P, peepholes) + (Wb + Rb), clipped, then f(); g: + (Wb + Rb), clipped,
 *          g(); c' = c * f + i * g; h' = h(c') * o. input_forget: f = 1 - i.
 *   GRU:   z, r: gate + (Wb + Rb), clipped, f(). Candidate without linear_before_reset:
 *          ((r . h) * Rh^T + x * Wh^T) + (Wbh + Rbh); with it: x * Wh^T + r . (h * Rh^T + Rbh), + Wbh.
 *          Then g(); h' = (1 - z) * n + z * h.
 * Sigmoid and Tanh are MLAS's (q8rt-math.h), as ORT calls them; the other activations are written
 * as ORT's rnn_helpers write them (libm where they use it).
 *
 * RNN (the simple one, ORT's rnn.cc rather than DeepCPU): x * W^T for every step before the steps,
 * each step y = h * R^T (none at the first step without initial_h: y = 0), y = y + (x * W^T + Wb +
 * Rb), then clip and f(), f written as ORT's rnn_activation_functors.h writes it (Tanh(x) =
 * 2 * Sigmoid(2x) - 1, Sigmoid from expf) with q8rt_expf / q8rt_logf. ORT's RNN runs its GEMMs on
 * MLAS without packing (a one-row product on its transposed-B kernel, K blocks chosen by shape), so
 * results agree with ORT within float rounding, not bit for bit; q8rt's own bytes are the same on
 * every backend and thread count (the same fma chains as LSTM/GRU). activation_alpha/beta: ORT reads
 * value d for direction d (0 when absent), ONNX in the order of the activations that take one (the
 * function's default when absent): q8rt takes activations with parameters only where both agree.
 *
 * sequence_lens: steps at or past a batch entry's length leave Y zero and its state unchanged
 * (Y_h/Y_c are the state after its last step; reverse runs from its last step down). ORT refuses
 * lengths outside [1, seq_length] at run time; q8rt's run cannot fail, so it clamps them to
 * [0, seq_length] (a constant sequence_lens is checked at load).
 *
 * Constant W and R (every real model) are packed once at load for the register-tiled f32-gemm
 * kernels (transposed for the f32-vfmac row kernel on the reference backend); each step's h * R^T
 * is a one-row GEMM on the packed R (it streams R once per step: memory-bound, like every LSTM
 * runtime's; measured on Zen 4 at the core's L3 read rate, ~90 GB/s: neither reading the columns
 * backward every other step, so that a step starts on what the last one left in L2, nor software
 * prefetch, nor more accumulator chains gave a measurable gain). A zero state (step 0 without
 * initial_h, a zero initial_h; GRU's r . h then) skips R: every product is a zero, the sums are
 * known (r_product), when R holds no infinity or NaN (0 * inf is NaN). x * W^T does not depend
 * on the recurrence, so it runs for every step and batch entry at once, as one GEMM per direction
 * before the steps (items of 64 rows x 4 panels, each running the K blocks in order: the same fma
 * chains, the same bytes). W and R given as graph inputs (the ONNX node tests) are transposed into
 * the step's workspace at every run. The recurrence of each direction is independent of the
 * other's, so a bidirectional node runs its two directions as two items on the pool; an LSTM's
 * then compute most of their x * W^T rows beside their own steps' R panels (see lstm_step_fused). */
#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "common/fmath.h"
#include "conv_paths.h"
#include "op.h"
#include "op_util.h"
#include "q8rt-isa.h"
#include "q8rt-kernels.h"
#include "q8rt-math.h"
#include "f32-vbinary/f32-vbinary.h"
#include "s32-f32-vcvt/s32-f32-vcvt.h"
#include "f32-rminmax/f32-rminmax.h"
#include "f32-gemvgemm/f32-gemvgemm.h"

enum rnn_kind { RNN_LSTM, RNN_GRU, RNN_SIMPLE };

#include "qlinear_common.h"

/* MLAS's SGEMM on packed B (ORT packs constant W and R) runs K in blocks of 256: each block is one
 * fma chain from 0, and a block's sum is added onto C (C = acc + C, one rounding). */
#define RNN_SGEMM_KBLOCK 256

enum act_kind {
  ACT_SIGMOID,
  ACT_TANH,
  ACT_RELU,
  ACT_AFFINE,
  ACT_LEAKY_RELU,
  ACT_THRESHOLDED_RELU,
  ACT_SCALED_TANH,
  ACT_HARD_SIGMOID,
  ACT_ELU,
  ACT_SOFTSIGN,
  ACT_SOFTPLUS
};

typedef struct rnn_act {
  enum act_kind kind;
  float alpha, beta;
  q8rt_f32_vunary_ukernel_fn fn; /* Sigmoid, Tanh: the f32-vunary kernel (MLAS's functions) */
} rnn_act;

#define RNN_MAX_ACTS 6 /* 3 per direction (LSTM), 2 for GRU */

typedef struct rnn_params {
  enum rnn_kind kind;
  int64_t hidden;
  int dirs;    /* 1 or 2 */
  int reverse; /* direction "reverse" (dirs == 1) */
  int layout;  /* 0: [seq, batch, ...]; 1: [batch, seq, ...] */
  int has_clip;
  float clip;
  int input_forget;        /* LSTM */
  int linear_before_reset; /* GRU */
  rnn_act acts[RNN_MAX_ACTS];
  int n_acts_per_dir;
  int gates; /* 4 (LSTM), 3 (GRU) or 1 (RNN) */
  q8rt_f32_vfmac_ukernel_fn fmac;
  /* f32-vbinary's a + b and a * b (vector forms): the cell's and the K blocks' elementwise
   * operations, one IEEE operation per element as the scalar loops they replace */
  q8rt_f32_vbinary_ukernel_fn vadd, vmul;
  /* constant W and R, prepared at load (all NULL: transposed at every run): on the reference
   * backend wt = W^T [D][I][G*H], rt = R^T [D][H][G*H]; else wpack and rpack packed for `gemm`
   * (panels of nr) per direction and K block of RNN_SGEMM_KBLOCK rows (see const_weights) */
  const float *wt, *rt, *wpack, *rpack;
  q8rt_f32_gemm_ukernel_fn gemm;
  /* LSTM on f32-gemm's panels of 32: a step's h * R^T with x * W^T rows of later steps beside it
   * (f32-gemvgemm; NULL: none for this CPU/backend) */
  q8rt_f32_gemvgemm_ukernel_fn gemvgemm;
  size_t nr, wpack_dir, rpack_dir; /* floats per direction */
  size_t rseg1;                    /* GRU: offset of R's h segment in a direction's rpack */
  int rfinite[2];                  /* the direction's R has no infinity or NaN (packed route) */
  /* DynamicQuantizeLSTM: W [D][I][4H] and R [D][H][4H] as int32 (w - zp), copied at load; scales
   * per direction ([D]) or per column ([D][4H]) */
  int quantized;
  int16_t *qw, *qr; /* w - zp: [-255, 255]; NULL when every direction's GEMM is packed (gw, gr) */
  float *w_scale, *r_scale;
  int w_scale_cols, r_scale_cols; /* 1 or 4H */
  int64_t q_input;                /* I, from W's shape */
  gemm_i32 gw[2], gr[2];          /* W and R of each direction on the int32 GEMM kernels (fn NULL:
                                   * none for this CPU/backend: the dq_row loop) */
  /* DynamicQuantizeLinear's kernels for X and h (min/max, quantize) and the int32 -> float stage */
  q8rt_f32_rminmax_ukernel_fn minmax;
  q8rt_f32_qint_vcvt_ukernel_fn quant;
  q8rt_s32_f32_vcvt_ukernel_fn vcvt;
} rnn_params;

typedef struct rnn_geom {
  size_t seq, batch, input, hidden;
  int has_b, has_len, has_h0, has_c0, has_p;
  int n_out;                            /* outputs the node declares (Y, Y_h, Y_c) */
  size_t ws_wt, ws_rt, ws_bias, ws_vec; /* workspace offsets in floats */
  size_t ws_xw, ws_tmp;                 /* x * W^T of every step [D][S*B][G*H], and a second one */
  size_t ws_total;
} rnn_geom;

_Static_assert(sizeof(rnn_geom) <= Q8RT_GEOM_BYTES, "rnn_geom too large");

/* ---- activations ----------------------------------------------------------------------------- */

static const struct {
  const char *name;
  enum act_kind kind;
  int n_alpha, n_beta;
  float alpha, beta; /* defaults */
} act_table[] = {
    {"Sigmoid", ACT_SIGMOID, 0, 0, 0.0f, 0.0f},
    {"Tanh", ACT_TANH, 0, 0, 0.0f, 0.0f},
    {"Relu", ACT_RELU, 0, 0, 0.0f, 0.0f},
    {"Affine", ACT_AFFINE, 1, 1, 1.0f, 0.0f},
    {"LeakyRelu", ACT_LEAKY_RELU, 1, 0, 0.01f, 0.0f},
    {"ThresholdedRelu", ACT_THRESHOLDED_RELU, 1, 0, 1.0f, 0.0f},
    {"ScaledTanh", ACT_SCALED_TANH, 1, 1, 1.0f, 1.0f},
    {"HardSigmoid", ACT_HARD_SIGMOID, 1, 1, 0.2f, 0.5f},
    {"Elu", ACT_ELU, 1, 0, 1.0f, 0.0f},
    {"Softsign", ACT_SOFTSIGN, 0, 0, 0.0f, 0.0f},
    {"Softplus", ACT_SOFTPLUS, 0, 0, 0.0f, 0.0f},
};

static void act_apply(const rnn_act *a, float *v, size_t n) {
  switch (a->kind) {
    case ACT_SIGMOID:
    case ACT_TANH: {
      const q8rt_f32_vunary_params none = {0};
      a->fn(n, v, v, &none);
      break;
    }
    case ACT_RELU:
      for (size_t i = 0; i < n; i++) v[i] = v[i] > 0.0f ? v[i] : 0.0f;
      break;
    case ACT_AFFINE:
      for (size_t i = 0; i < n; i++) v[i] = a->alpha * v[i] + a->beta;
      break;
    case ACT_LEAKY_RELU:
      for (size_t i = 0; i < n; i++) v[i] = v[i] >= 0.0f ? v[i] : a->alpha * v[i];
      break;
    case ACT_THRESHOLDED_RELU:
      for (size_t i = 0; i < n; i++) v[i] = v[i] > a->alpha ? v[i] : 0.0f;
      break;
    case ACT_SCALED_TANH:
      for (size_t i = 0; i < n; i++) v[i] = a->alpha * q8rt_tanhf(a->beta * v[i]);
      break;
    case ACT_HARD_SIGMOID:
      for (size_t i = 0; i < n; i++) {
        const float x = a->alpha * v[i] + a->beta;
        v[i] = x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
      }
      break;
    case ACT_ELU:
      for (size_t i = 0; i < n; i++) v[i] = v[i] >= 0.0f ? v[i] : a->alpha * (q8rt_expf(v[i]) - 1.0f);
      break;
    case ACT_SOFTSIGN:
      for (size_t i = 0; i < n; i++) v[i] = v[i] / (1.0f + fabsf(v[i]));
      break;
    case ACT_SOFTPLUS:
      for (size_t i = 0; i < n; i++) v[i] = q8rt_logf(1.0f + q8rt_expf(v[i]));
      break;
  }
}

/* RNN's activations as ORT's rnn_activation_functors.h computes them (float arithmetic, expf / logf
 * as q8rt_expf / q8rt_logf; std::max(0, NaN) and std::min(1, .) as written there) */
static float ort_rnn_sigmoid(float x) {
  if (x >= 0.0f) return 1.0f / (1.0f + q8rt_expf(-x));
  const float e = q8rt_expf(x);
  return e / (1.0f + e);
}

static float ort_rnn_act(const rnn_act *a, float x) {
  switch (a->kind) {
    case ACT_SIGMOID: return ort_rnn_sigmoid(x);
    case ACT_TANH: return 2.0f * ort_rnn_sigmoid(2.0f * x) - 1.0f;
    case ACT_RELU: return 0.0f < x ? x : 0.0f;
    case ACT_AFFINE: return a->alpha * x + a->beta;
    case ACT_LEAKY_RELU: return x >= 0.0f ? x : a->alpha * x;
    case ACT_THRESHOLDED_RELU: return x > a->alpha ? x : 0.0f;
    case ACT_SCALED_TANH: return a->alpha * (2.0f * ort_rnn_sigmoid(2.0f * (a->beta * x)) - 1.0f);
    case ACT_HARD_SIGMOID: {
      const float y = a->alpha * x + a->beta, m = 0.0f < y ? y : 0.0f;
      return m < 1.0f ? m : 1.0f;
    }
    case ACT_ELU: return x >= 0.0f ? x : a->alpha * (q8rt_expf(x) - 1.0f);
    case ACT_SOFTSIGN: return x / (1.0f + fabsf(x));
    case ACT_SOFTPLUS: return q8rt_logf(1.0f + q8rt_expf(x));
  }
  return x;
}

/* ORT's GRU applies its reset and output gates with its own rational approximation (rnn_helpers.cc:
 * Eigen's tanh coefficients, plain multiplies and adds, x clamped to +-10 for tanh, +-20 for
 * sigmoid, which it evaluates as 0.5 * (1 + tanh(x / 2))), fused with the products around them.
 * The update gate goes through MLAS like every LSTM gate. */
static void ort_tanh_pq(float x, float *pp, float *qq) {
  const float x2 = x * x;
  float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = x2 * p + -8.60467152213735e-11f;
  p = x2 * p + 5.12229709037114e-08f;
  p = x2 * p + 1.48572235717979e-05f;
  p = x2 * p + 6.37261928875436e-04f;
  p = x2 * p + 4.89352455891786e-03f;
  *pp = x * p;
  float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = x2 * q + 2.26843463243900e-03f;
  *qq = x2 * q + 4.89352518554385e-03f;
}

static float ort_tanh_ratio(float x) {
  float p, q;
  ort_tanh_pq(x, &p, &q);
  return p / q;
}

static float clampf(float v, float b) { return v < -b ? -b : v > b ? b : v; }

/* d = s1 . f(r) */
static void gru_reset_gate(const rnn_act *a, const float *s1, const float *r, float *d, size_t n) {
  switch (a->kind) {
    case ACT_SIGMOID:
      for (size_t i = 0; i < n; i++) d[i] = s1[i] * 0.5f * (1.0f + ort_tanh_ratio(0.5f * clampf(r[i], 20.0f)));
      break;
    case ACT_TANH:
      for (size_t i = 0; i < n; i++) {
        /* ORT: ps1 * p / q, i.e. (ps1 * p) / q */
        float p, q;
        ort_tanh_pq(clampf(r[i], 10.0f), &p, &q);
        d[i] = s1[i] * p / q;
      }
      break;
    case ACT_RELU:
      for (size_t i = 0; i < n; i++) d[i] = s1[i] * (r[i] > 0.0f ? r[i] : 0.0f);
      break;
    default:
      for (size_t i = 0; i < n; i++) {
        float v = r[i];
        act_apply(a, &v, 1);
        d[i] = s1[i] * v;
      }
      break;
  }
}

/* h = (1 - z) . g(x) + z . h */
static void gru_output_gate(const rnn_act *a, const float *x, const float *z, float *h, size_t n) {
  switch (a->kind) {
    case ACT_SIGMOID:
      for (size_t i = 0; i < n; i++) {
        h[i] = (1.0f - z[i]) * 0.5f * (1.0f + ort_tanh_ratio(0.5f * clampf(x[i], 20.0f))) + z[i] * h[i];
      }
      break;
    case ACT_TANH:
      for (size_t i = 0; i < n; i++) h[i] = (1.0f - z[i]) * ort_tanh_ratio(clampf(x[i], 10.0f)) + z[i] * h[i];
      break;
    case ACT_RELU:
      for (size_t i = 0; i < n; i++) h[i] = (1.0f - z[i]) * (x[i] > 0.0f ? x[i] : 0.0f) + z[i] * h[i];
      break;
    default:
      for (size_t i = 0; i < n; i++) {
        float v = x[i];
        act_apply(a, &v, 1);
        h[i] = (1.0f - z[i]) * v + z[i] * h[i];
      }
      break;
  }
}

/* activations / activation_alpha / activation_beta: names are matched without regard to case (as
 * ORT does); each activation that takes an alpha (beta) consumes the next one from the list, else
 * its default. Bidirectional with one direction's worth of names uses them for both. */
static q8rt_status parse_acts(const ir_node *n, rnn_params *p, q8rt_error *err) {
  const int per_dir = p->n_acts_per_dir;
  static const enum act_kind lstm_def[3] = {ACT_SIGMOID, ACT_TANH, ACT_TANH};
  static const enum act_kind gru_def[2] = {ACT_SIGMOID, ACT_TANH};
  for (int d = 0; d < p->dirs; d++) {
    for (int k = 0; k < per_dir; k++) {
      rnn_act *a = &p->acts[d * per_dir + k];
      a->kind = p->kind == RNN_LSTM ? lstm_def[k] : p->kind == RNN_GRU ? gru_def[k] : ACT_TANH;
      a->alpha = a->beta = 0.0f;
    }
  }
  const ir_attr *names = ir_node_attr(n, "activations");
  const ir_attr *alphas = ir_node_attr(n, "activation_alpha");
  const ir_attr *betas = ir_node_attr(n, "activation_beta");
  if (names == NULL) {
    if ((alphas != NULL && alphas->count) || (betas != NULL && betas->count)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                       "%s node '%s': activation_alpha/activation_beta given without activations", n->op_type, n->name);
    }
    return Q8RT_OK;
  }
  if (names->type != IR_ATTR_STRINGS) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': attribute 'activations' must be a list of strings",
                     n->op_type, n->name);
  }
  if ((alphas != NULL && alphas->type != IR_ATTR_FLOATS) || (betas != NULL && betas->type != IR_ATTR_FLOATS)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': attributes 'activation_alpha'/'activation_beta' must be lists of floats",
                     n->op_type, n->name);
  }
  size_t count = names->count;
  /* RNN, one direction, two names: ONNX's default list is {Tanh, Tanh}, and ORT takes the first */
  if (p->kind == RNN_SIMPLE && p->dirs == 1 && count == 2) count = 1;
  if (count != (size_t)(per_dir * p->dirs) && !(p->dirs == 2 && count == (size_t)per_dir)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': %zu activations given, expected %d (%d per direction)", n->op_type, n->name, count,
                     per_dir * p->dirs, per_dir);
  }
  size_t ia = 0, ib = 0;
  const char *s = names->s;
  const size_t n_alpha = alphas != NULL ? alphas->count : 0, n_beta = betas != NULL ? betas->count : 0;
  for (size_t k = 0; k < count; k++) {
    size_t t = 0;
    while (t < sizeof(act_table) / sizeof(act_table[0]) && strcasecmp(s, act_table[t].name) != 0) t++;
    if (t == sizeof(act_table) / sizeof(act_table[0])) {
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': activation '%s' is not supported", n->op_type,
                       n->name, s);
    }
    rnn_act a = {act_table[t].kind, act_table[t].alpha, act_table[t].beta, NULL};
    if (p->kind == RNN_SIMPLE && (act_table[t].n_alpha || act_table[t].n_beta) &&
        (count != (size_t)p->dirs || (act_table[t].n_alpha && n_alpha != (size_t)p->dirs) ||
         (act_table[t].n_beta && n_beta != (size_t)p->dirs) || (act_table[t].n_alpha && ia != k) ||
         (act_table[t].n_beta && ib != k))) {
      /* ORT reads activation_alpha[d] for direction d (0 when absent), ONNX the next unused value
       * (the function's default when absent): they agree when every direction names an activation
       * taking the parameter and the list gives one value per direction */
      return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                       "%s node '%s': activation '%s' needs activation_alpha/activation_beta with one value per "
                       "direction, each direction's activation taking them (ONNX and ONNX Runtime read them "
                       "differently otherwise)",
                       n->op_type, n->name, s);
    }
    if (act_table[t].n_alpha && ia < n_alpha) a.alpha = alphas->floats[ia++];
    if (act_table[t].n_beta && ib < n_beta) a.beta = betas->floats[ib++];
    p->acts[k] = a;
    if (count == (size_t)per_dir && p->dirs == 2) p->acts[per_dir + k] = a;
    s += strlen(s) + 1;
  }
  return Q8RT_OK;
}

/* DynamicQuantizeLSTM's constant weights: W [D, I, 4H] and R [D, H, 4H] (int8 or uint8), scales [D]
 * or [D, 4H] (float32), zero points of the weight type, one value per direction (as ORT requires). */
static q8rt_status dq_weights(op_prepare_ctx *ctx, rnn_params *p, int wi, int si, int zi, int64_t rows, int16_t **qout,
                              float **scale_out, int *cols_out, q8rt_error *err) {
  const ir_graph *g = ctx->graph;
  const ir_node *n = ctx->node;
  const char *what = wi == 1 ? "W" : "R";
  const int64_t D = p->dirs, G4 = 4 * p->hidden;
  const ir_value *w = ir_node_input(g, n, wi);
  const ir_value *sv = ir_node_input(g, n, si);
  const ir_value *zv = ir_node_input(g, n, zi);
  if (w == NULL || w->constant == NULL || sv == NULL || sv->constant == NULL || zv == NULL || zv->constant == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': %s, its scale and zero point must be constant initializers", n->op_type, n->name,
                     what);
  }
  const ir_tensor *t = w->constant, *sc = sv->constant, *zp = zv->constant;
  if (!q8rt_dtype_is_8bit(t->dtype) || t->rank != 3 || t->dims[0] != D || t->dims[2] != G4 ||
      (rows >= 0 && t->dims[1] != rows) || t->dims[1] <= 0) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': %s must be int8/uint8 [%lld, %s, %lld] (has %s of rank %d)", n->op_type, n->name,
                     what, (long long)D, wi == 1 ? "input_size" : "hidden_size", (long long)G4,
                     q8rt_onnx_type_name(t->dtype), t->rank);
  }
  if (sc->dtype != Q8RT_DTYPE_FLOAT32 || (sc->count != D && sc->count != D * G4)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': %s_scale must be float32 with %lld or %lld values",
                     n->op_type, n->name, what, (long long)D, (long long)(D * G4));
  }
  if (zp->dtype != t->dtype || zp->count != sc->count) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': %s_zero_point must be %s with %lld values",
                     n->op_type, n->name, what, q8rt_onnx_type_name(t->dtype), (long long)sc->count);
  }
  const int64_t per = sc->count / D;
  for (int64_t d = 0; d < D; d++) {
    for (int64_t j = 1; j < per; j++) {
      if (qk_load8(zp->data, zp->dtype, (size_t)(d * per + j)) != qk_load8(zp->data, zp->dtype, (size_t)(d * per))) {
        return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED,
                         "%s node '%s': %s_zero_point differs within direction %lld (one zero point per direction)",
                         n->op_type, n->name, what, (long long)d);
      }
    }
    for (int64_t j = 0; j < per; j++) {
      const float v = ((const float *)sc->data)[d * per + j];
      if (!(v > 0.0f) || !isfinite(v)) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                         "%s node '%s': %s_scale[%lld] = %g (must be positive and finite)", n->op_type, n->name, what,
                         (long long)(d * per + j), (double)v);
      }
    }
  }
  float *s = q8rt_pool_array(ctx->pool, (size_t)sc->count, sizeof(float));
  if (s == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  memcpy(s, sc->data, (size_t)sc->count * sizeof(float));
  /* the int32 GEMM kernels, one packing per direction: B [k][4H] with one zero point */
  const size_t K = (size_t)t->dims[1], GH = (size_t)G4;
  int32_t *zps = q8rt_pool_array(ctx->pool, GH, sizeof(int32_t));
  if (zps == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  gemm_i32 *gi = wi == 1 ? p->gw : p->gr;
  for (int64_t d = 0; d < D; d++) {
    for (size_t j = 0; j < GH; j++) zps[j] = qk_load8(zp->data, zp->dtype, (size_t)(d * per));
    const uint8_t *wd = (const uint8_t *)t->data + (size_t)d * K * GH;
    q8rt_status st =
        gemm_i32_prepare(1, GH, K, wd, t->dtype, 1, GH, zps, ctx->backend, ctx->isa, ctx->pool, &gi[d], err);
    if (st != Q8RT_OK) return st;
  }
  /* w - zp as int16 for the row loop (dq_row), only where a direction has no GEMM kernel: the
   * packed directions never read it */
  int packed = 1;
  for (int64_t d = 0; d < D; d++) packed &= gi[d].fn != NULL;
  int16_t *q = NULL;
  if (!packed) {
    q = q8rt_pool_array(ctx->pool, (size_t)t->count, sizeof(int16_t));
    if (q == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    const int64_t per_dir = t->count / D;
    for (int64_t i = 0; i < t->count; i++) {
      const int32_t z = qk_load8(zp->data, zp->dtype, (size_t)((i / per_dir) * per));
      q[i] = (int16_t)(qk_load8(t->data, t->dtype, (size_t)i) - z);
    }
  }
  *qout = q;
  *scale_out = s;
  *cols_out = (int)per;
  if (wi == 1) p->q_input = t->dims[1];
  return Q8RT_OK;
}

static q8rt_status dq_prepare(op_prepare_ctx *ctx, rnn_params *p, q8rt_error *err) {
  q8rt_status st;
  p->quantized = 1;
  /* ORT quantizes the hidden states of all batch rows as one block per step; how rows that have
   * finished their sequence enter that block is not reproduced yet, so sequence_lens is refused
   * rather than risking a different answer */
  if (ir_node_input(ctx->graph, ctx->node, 4) != NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': input sequence_lens is not supported",
                     ctx->node->op_type, ctx->node->name);
  }
  const char *qname = NULL;
  p->quant = op_quantize_kernel(Q8RT_DTYPE_UINT8, ctx->isa, ctx->backend, &qname);
  if (qname == NULL) {
    return q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "%s node '%s': no uint8 quantization kernel", ctx->node->op_type,
                     ctx->node->name);
  }
  p->minmax = q8rt_f32_rminmax_ukernel__scalar;
#define Q8RT_F32_RMINMAX_UKERNEL(visa, fn) \
  if (p->minmax == q8rt_f32_rminmax_ukernel__scalar && op_isa_usable(visa, ctx->isa, ctx->backend)) p->minmax = fn;
#include "f32-rminmax/f32-rminmax.inc"
#undef Q8RT_F32_RMINMAX_UKERNEL
  p->vcvt = op_s32_f32_vcvt_pick(ctx);
  if ((st = dq_weights(ctx, p, 1, 8, 9, -1, &p->qw, &p->w_scale, &p->w_scale_cols, err)) != Q8RT_OK) return st;
  if ((st = dq_weights(ctx, p, 2, 10, 11, p->hidden, &p->qr, &p->r_scale, &p->r_scale_cols, err)) != Q8RT_OK) return st;
  /* W, R, their scales and zero points live on in qw/qr, the scales copied and the GEMM packings
   * (dq_run reads none of inputs 1, 2, 8-11) */
  ctx->consumed |= 1u << 1 | 1u << 2 | 1u << 8 | 1u << 9 | 1u << 10 | 1u << 11;
  return Q8RT_OK;
}

/* ---- prepare / infer ------------------------------------------------------------------------- */

/* A GEMM's B given transposed (bt [n][k], row stride ldbt) packed for the f32-gemm kernels per K
 * block of RNN_SGEMM_KBLOCK rows: block b starts at b * kblock_floats(k, n, nr). */
static size_t kblock_floats(size_t k, size_t n, size_t nr) {
  return q8rt_f32_gemm_packed_size(k < RNN_SGEMM_KBLOCK ? k : RNN_SGEMM_KBLOCK, n, nr);
}
static size_t kblocks_floats(size_t k, size_t n, size_t nr) {
  return kblock_floats(k, n, nr) * ((k + RNN_SGEMM_KBLOCK - 1) / RNN_SGEMM_KBLOCK);
}
static void pack_kblocks(size_t k, size_t n, size_t nr, const float *bt, size_t ldbt, float *packed) {
  for (size_t k0 = 0, b = 0; k0 < k; k0 += RNN_SGEMM_KBLOCK, b++) {
    const size_t kn = k - k0 < RNN_SGEMM_KBLOCK ? k - k0 : RNN_SGEMM_KBLOCK;
    q8rt_f32_gemm_pack_t(kn, n, nr, bt + k0, ldbt, packed + b * kblock_floats(k, n, nr));
  }
}

/* W and R when both are constant float32 of the expected shape ([D][G*H][I], [D][G*H][H]; anything
 * else is left for infer to check and report), prepared for the f32-gemm kernels: W packed per K
 * block; R packed per K block in the column segments the steps multiply by (LSTM: all 4H columns;
 * GRU: z and r [0, 2H), then h [2H, 3H)). On the reference backend both are transposed for the
 * row kernel instead. */
static q8rt_status const_weights(op_prepare_ctx *ctx, rnn_params *p, q8rt_error *err) {
  const ir_node *n = ctx->node;
  const ir_value *wv = ir_node_input(ctx->graph, n, 1), *rv = ir_node_input(ctx->graph, n, 2);
  if (wv == NULL || rv == NULL || wv->constant == NULL || rv->constant == NULL) return Q8RT_OK;
  const ir_tensor *w = wv->constant, *r = rv->constant;
  const size_t D = (size_t)p->dirs, H = (size_t)p->hidden, GH = (size_t)p->gates * H;
  if (w->dtype != Q8RT_DTYPE_FLOAT32 || r->dtype != Q8RT_DTYPE_FLOAT32 || w->rank != 3 || r->rank != 3 ||
      w->dims[0] != (int64_t)D || w->dims[1] != (int64_t)GH || w->dims[2] < 1 || r->dims[0] != (int64_t)D ||
      r->dims[1] != (int64_t)GH || r->dims[2] != (int64_t)H) {
    return Q8RT_OK;
  }
  /* the constants' element counts are real allocations, and packing pads each dimension by less
   * than one panel or K block: none of these sizes can overflow */
  const size_t I = (size_t)w->dims[2];
  const op_f32_gemm_variant *v = op_f32_gemm_pick(ctx);
  const float *W = w->data, *R = r->data;
  if (v == NULL) {
    float *wt = q8rt_pool_alloc(ctx->pool, D * GH * I * sizeof(float), 64);
    float *rt = q8rt_pool_alloc(ctx->pool, D * GH * H * sizeof(float), 64);
    if (wt == NULL || rt == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    for (size_t d = 0; d < D; d++) {
      for (size_t j = 0; j < GH; j++) {
        for (size_t k = 0; k < I; k++) wt[(d * I + k) * GH + j] = W[(d * GH + j) * I + k];
        for (size_t k = 0; k < H; k++) rt[(d * H + k) * GH + j] = R[(d * GH + j) * H + k];
      }
    }
    p->wt = wt;
    p->rt = rt;
    ctx->consumed |= 1u << 1 | 1u << 2; /* rnn_run reads W and R only when neither is prepared */
    return Q8RT_OK;
  }
  const size_t nr = v->nr, seg0 = p->kind == RNN_GRU ? 2 * H : GH;
  p->wpack_dir = kblocks_floats(I, GH, nr);
  p->rseg1 = kblocks_floats(H, seg0, nr);
  p->rpack_dir = p->rseg1 + (p->kind == RNN_GRU ? kblocks_floats(H, H, nr) : 0);
  float *wp = q8rt_pool_alloc(ctx->pool, D * p->wpack_dir * sizeof(float), 64);
  float *rp = q8rt_pool_alloc(ctx->pool, D * p->rpack_dir * sizeof(float), 64);
  if (wp == NULL || rp == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (size_t d = 0; d < D; d++) {
    const float *Rd = R + d * GH * H;
    size_t q = 0;
    while (q < GH * H && isfinite(Rd[q])) q++;
    p->rfinite[d] = q == GH * H;
    pack_kblocks(I, GH, nr, W + d * GH * I, I, wp + d * p->wpack_dir);
    pack_kblocks(H, seg0, nr, R + d * GH * H, H, rp + d * p->rpack_dir);
    if (p->kind == RNN_GRU) pack_kblocks(H, H, nr, R + (d * GH + 2 * H) * H, H, rp + d * p->rpack_dir + p->rseg1);
  }
  p->wpack = wp;
  p->rpack = rp;
  p->gemm = v->fn;
  p->nr = nr;
  if (p->kind == RNN_LSTM && nr == 32) {
    static const struct {
      uint32_t isa;
      q8rt_f32_gemvgemm_ukernel_fn fn;
    } fused[] = {
#define Q8RT_F32_GEMVGEMM_UKERNEL(isa, fn) {isa, fn},
#include "f32-gemvgemm/f32-gemvgemm.inc"
#undef Q8RT_F32_GEMVGEMM_UKERNEL
        {0, NULL}};
    for (size_t i = 0; fused[i].fn != NULL && p->gemvgemm == NULL; i++) {
      if (op_isa_usable(fused[i].isa, ctx->isa, ctx->backend)) p->gemvgemm = fused[i].fn;
    }
  }
  ctx->consumed |= 1u << 1 | 1u << 2; /* rnn_run reads W and R only when neither is prepared */
  return Q8RT_OK;
}

static q8rt_status rnn_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err, enum rnn_kind kind) {
  const ir_node *n = ctx->node;
  const ir_graph *g = ctx->graph;
  const int quantized = strcmp(n->op_type, "DynamicQuantizeLSTM") == 0;
  const int max_in = quantized ? 12 : kind == RNN_LSTM ? 8 : 6; /* GRU and RNN: X W R B lens h0 */
  if ((quantized && n->n_inputs != 12) || n->n_inputs < 3 || n->n_inputs > max_in || n->n_outputs < 1 ||
      n->n_outputs > (kind == RNN_LSTM ? 3 : 2)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': expects 3 to %d inputs and 1 to %d outputs",
                     n->op_type, n->name, max_in, kind == RNN_LSTM ? 3 : 2);
  }
  for (int i = 0; i < 3; i++) {
    if (n->inputs[i] < 0) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': input %d (%s) is missing", n->op_type, n->name, i,
                       i == 0   ? "X"
                       : i == 1 ? "W"
                                : "R");
    }
  }
  rnn_params *p = q8rt_pool_alloc(ctx->pool, sizeof(*p), 16);
  if (p == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  memset(p, 0, sizeof(*p));
  p->kind = kind;
  p->gates = kind == RNN_LSTM ? 4 : kind == RNN_GRU ? 3 : 1;
  p->n_acts_per_dir = kind == RNN_LSTM ? 3 : kind == RNN_GRU ? 2 : 1;
  q8rt_status st;
  int64_t hidden, layout = 0, input_forget = 0, lbr = 0;
  const char *dir;
  if ((st = ir_attr_int(n, "hidden_size", -1, &hidden, err)) != Q8RT_OK) return st;
  if ((st = ir_attr_string(n, "direction", "forward", &dir, err)) != Q8RT_OK) return st;
  if (n->opset >= 14 && (st = ir_attr_int(n, "layout", 0, &layout, err)) != Q8RT_OK) return st;
  if (kind == RNN_LSTM && (st = ir_attr_int(n, "input_forget", 0, &input_forget, err)) != Q8RT_OK) return st;
  if (kind == RNN_GRU && (st = ir_attr_int(n, "linear_before_reset", 0, &lbr, err)) != Q8RT_OK) return st;
  if (strcmp(dir, "forward") == 0) {
    p->dirs = 1;
  } else if (strcmp(dir, "reverse") == 0) {
    p->dirs = 1;
    p->reverse = 1;
  } else if (strcmp(dir, "bidirectional") == 0) {
    p->dirs = 2;
  } else {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL,
                     "%s node '%s': direction '%s' (expected forward, reverse or bidirectional)", n->op_type, n->name,
                     dir);
  }
  if (layout != 0 && layout != 1) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': layout %lld (expected 0 or 1)", n->op_type, n->name,
                     (long long)layout);
  }
  p->layout = (int)layout;
  p->input_forget = input_forget != 0;
  p->linear_before_reset = lbr != 0;
  if (ir_node_attr(n, "clip") != NULL) {
    if ((st = ir_attr_float(n, "clip", FLT_MAX, &p->clip, err)) != Q8RT_OK) return st;
    if (!(p->clip > 0.0f)) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': clip %g must be positive", n->op_type, n->name,
                       (double)p->clip);
    }
    p->has_clip = 1;
  }
  if ((st = parse_acts(n, p, err)) != Q8RT_OK) return st;
  for (int i = 0; i < RNN_MAX_ACTS && kind != RNN_SIMPLE; i++) {
    if (p->acts[i].kind == ACT_SIGMOID) p->acts[i].fn = op_f32_vunary_pick(ctx, Q8RT_F32_VSIGMOID, NULL);
    if (p->acts[i].kind == ACT_TANH) p->acts[i].fn = op_f32_vunary_pick(ctx, Q8RT_F32_VTANH, NULL);
  }
  /* hidden_size: from the attribute, else from R's shape; checked against W/R in infer */
  if (ir_node_attr(n, "hidden_size") == NULL) {
    const ir_value *r = ir_node_input(g, n, 2);
    if (r->rank == 3 && r->dims[2] > 0) hidden = r->dims[2];
  }
  if (ir_node_attr(n, "hidden_size") == NULL && quantized) {
    const ir_value *r = ir_node_input(g, n, 2);
    if (r->rank == 3 && r->dims[1] > 0) hidden = r->dims[1];
  }
  if (hidden <= 0 || hidden > (INT64_C(1) << 24)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': hidden_size %lld (must be in 1..2^24)", n->op_type,
                     n->name, (long long)hidden);
  }
  p->hidden = hidden;
  if (quantized && (st = dq_prepare(ctx, p, err)) != Q8RT_OK) return st;
  /* a constant sequence_lens is checked here, as ORT checks it at run time */
  const ir_value *lens = ir_node_input(g, n, 4);
  if (lens != NULL && lens->constant != NULL) {
    const ir_tensor *t = lens->constant;
    if (t->dtype != Q8RT_DTYPE_INT32) {
      return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': sequence_lens is %s (must be int32)", n->op_type,
                       n->name, q8rt_onnx_type_name(t->dtype));
    }
    for (int64_t i = 0; i < t->count; i++) {
      const int32_t v = ((const int32_t *)t->data)[i];
      if (v < 1) {
        return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "%s node '%s': sequence_lens[%lld] = %d (must be >= 1)",
                         n->op_type, n->name, (long long)i, (int)v);
      }
    }
  }
  uint32_t fmac_isa = Q8RT_ISA_SCALAR;
  p->fmac = op_f32_vfmac_pick(ctx, NULL, &fmac_isa);
  p->vadd = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_ADD, OP_VBIN_VV);
  p->vmul = op_f32_vbinary_kernel(ctx->isa, ctx->backend, OP_VBIN_MUL, OP_VBIN_VV);
  /* named after the row kernel's ISA (the packed GEMMs, when the weights are constant, are the
   * f32-gemm variant of the same CPU) */
  static const char *const names[3][3] = {{"lstm_f32__scalar", "lstm_f32__avx2", "lstm_f32__neon"},
                                          {"gru_f32__scalar", "gru_f32__avx2", "gru_f32__neon"},
                                          {"rnn_f32__scalar", "rnn_f32__avx2", "rnn_f32__neon"}};
  ctx->kernel = names[kind][fmac_isa == Q8RT_ISA_AVX2 ? 1 : fmac_isa == Q8RT_ISA_NEON ? 2 : 0];
  ctx->reason = kind == RNN_SIMPLE ? "float32, ONNX Runtime's RNN arithmetic (fma chains, its activation formulas)"
                                   : "float32, ONNX Runtime's DeepCPU gate arithmetic (fma chains, MLAS sigmoid/tanh)";
  if (!quantized && (st = const_weights(ctx, p, err)) != Q8RT_OK) return st;
  if (quantized) {
    ctx->kernel = p->gw[0].fn != NULL ? p->gw[0].kernel : "dynamic_quantize_lstm__scalar";
    ctx->reason = "ONNX Runtime's dynamic u8 quantization of X and h per GEMM, exact int32 GEMM, float gates";
  }
  *out = p;
  return Q8RT_OK;
}

static q8rt_status lstm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return rnn_prepare(ctx, out, err, RNN_LSTM);
}
static q8rt_status gru_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return rnn_prepare(ctx, out, err, RNN_GRU);
}
static q8rt_status simple_rnn_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return rnn_prepare(ctx, out, err, RNN_SIMPLE);
}

/* Input i must be float32 of rank `rank` with the known dims in want[] (-1: any). */
static q8rt_status check_input(const op_node *n, const op_shape *in, int i, const char *what, q8rt_dtype dtype,
                               int rank, const int64_t *want, q8rt_error *err) {
  const op_shape *s = &in[i];
  if (s->dtype != dtype) {
    return q8rt_fail(err, s->dtype == Q8RT_DTYPE_UNDEFINED ? Q8RT_ERROR_INVALID_MODEL : Q8RT_ERROR_UNSUPPORTED,
                     "%s node '%s': input %d (%s) is %s (expected %s)", n->op_type, n->name, i, what,
                     q8rt_onnx_type_name(s->dtype), q8rt_onnx_type_name(dtype));
  }
  if (s->rank < 0) return Q8RT_OK;
  if (s->rank != rank) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input %d (%s) has rank %d (expected %d)", n->op_type,
                     n->name, i, what, s->rank, rank);
  }
  for (int d = 0; d < rank; d++) {
    if (want[d] >= 0 && s->dims[d] >= 0 && s->dims[d] != want[d]) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input %d (%s) dimension %d is %lld (expected %lld)",
                       n->op_type, n->name, i, what, d, (long long)s->dims[d], (long long)want[d]);
    }
  }
  return Q8RT_OK;
}

static q8rt_status rnn_infer(const void *params, const op_node *n, const op_shape *in, op_shape *out, int concrete,
                             void *geom, q8rt_error *err) {
  const rnn_params *p = params;
  const int64_t H = p->hidden, G = p->gates, D = p->dirs;
  const op_shape *x = &in[0];
  q8rt_status st;
  int64_t seq = -1, batch = -1, isz = -1;
  const int64_t any3[3] = {-1, -1, -1};
  if ((st = check_input(n, in, 0, "X", Q8RT_DTYPE_FLOAT32, 3, any3, err)) != Q8RT_OK) return st;
  if (x->rank == 3) {
    seq = x->dims[p->layout ? 1 : 0];
    batch = x->dims[p->layout ? 0 : 1];
    isz = x->dims[2];
  }
  if (p->quantized) {
    /* W, R and their quantization were checked at load */
    if (isz >= 0 && isz != p->q_input) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': input 0 (X) has input size %lld, W has %lld", n->op_type,
                       n->name, (long long)isz, (long long)p->q_input);
    }
    isz = p->q_input;
  } else {
    const int64_t wdims[3] = {D, G * H, isz}, rdims[3] = {D, G * H, H};
    if ((st = check_input(n, in, 1, "W", Q8RT_DTYPE_FLOAT32, 3, wdims, err)) != Q8RT_OK) return st;
    if ((st = check_input(n, in, 2, "R", Q8RT_DTYPE_FLOAT32, 3, rdims, err)) != Q8RT_OK) return st;
    if (isz < 0 && in[1].rank == 3) isz = in[1].dims[2];
  }
  const int has[8] = {1,
                      1,
                      1,
                      n->n_inputs > 3 && n->inputs[3] >= 0,
                      n->n_inputs > 4 && n->inputs[4] >= 0,
                      n->n_inputs > 5 && n->inputs[5] >= 0,
                      n->n_inputs > 6 && n->inputs[6] >= 0,
                      n->n_inputs > 7 && n->inputs[7] >= 0};
  const int64_t bdims[2] = {D, 2 * G * H}, ldims[1] = {batch};
  const int64_t sdims[3] = {p->layout ? batch : D, p->layout ? D : batch, H};
  const int64_t pdims[2] = {D, 3 * H};
  if (has[3] && (st = check_input(n, in, 3, "B", Q8RT_DTYPE_FLOAT32, 2, bdims, err)) != Q8RT_OK) return st;
  if (has[4] && (st = check_input(n, in, 4, "sequence_lens", Q8RT_DTYPE_INT32, 1, ldims, err)) != Q8RT_OK) return st;
  if (has[5] && (st = check_input(n, in, 5, "initial_h", Q8RT_DTYPE_FLOAT32, 3, sdims, err)) != Q8RT_OK) return st;
  if (has[6] && (st = check_input(n, in, 6, "initial_c", Q8RT_DTYPE_FLOAT32, 3, sdims, err)) != Q8RT_OK) return st;
  if (has[7] && (st = check_input(n, in, 7, "P", Q8RT_DTYPE_FLOAT32, 2, pdims, err)) != Q8RT_OK) return st;
  /* Y: [seq, D, batch, H] (layout 1: [batch, seq, D, H]); Y_h, Y_c: [D, batch, H] ([batch, D, H]) */
  for (int k = 0; k < n->n_outputs; k++) {
    op_shape *o = &out[k];
    memset(o, 0, sizeof(*o));
    o->dtype = Q8RT_DTYPE_FLOAT32;
    if (k == 0) {
      o->rank = 4;
      const int64_t yl0[4] = {seq, D, batch, H}, yl1[4] = {batch, seq, D, H};
      memcpy(o->dims, p->layout ? yl1 : yl0, sizeof(yl0));
    } else {
      o->rank = 3;
      memcpy(o->dims, sdims, sizeof(sdims));
    }
  }
  if (!concrete) return Q8RT_OK;
  if (seq < 0 || batch < 0 || isz < 0) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': the shape of X is not known", n->op_type, n->name);
  }
  /* workspace (floats): W^T [D][I][G*H] and R^T [D][H][G*H] unless prepared at load, bias
   * [D][(G+1)*H], vectors [D][6*G*H], x * W^T of every step [D][S*B][G*H] and, for the packed
   * GEMM's K blocks after the first, a second such array */
  size_t wt = 0, rt = 0, gh, vec, xw, tmp = 0, total;
  const int run_wt = p->wt == NULL && p->wpack == NULL, run_rt = p->rt == NULL && p->rpack == NULL;
  if (!q8rt_mul_size((size_t)G, (size_t)H, &gh) || (run_wt && !q8rt_mul_size(gh, (size_t)isz, &wt)) ||
      !q8rt_mul_size(wt, (size_t)D, &wt) || (run_rt && !q8rt_mul_size(gh, (size_t)H, &rt)) ||
      !q8rt_mul_size(rt, (size_t)D, &rt) || !q8rt_mul_size(gh, 6 * (size_t)D, &vec) ||
      !q8rt_mul_size(gh, (size_t)D, &xw) || !q8rt_mul_size(xw, (size_t)seq, &xw) ||
      !q8rt_mul_size(xw, (size_t)batch, &xw) || !q8rt_add_size(wt, rt, &total) ||
      !q8rt_add_size(total, (size_t)D * (size_t)(G + 1) * (size_t)H, &total) || !q8rt_add_size(total, vec, &total) ||
      !q8rt_add_size(total, xw, &total)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensors are too large", n->op_type, n->name);
  }
  if (p->wpack != NULL && isz > RNN_SGEMM_KBLOCK) tmp = xw;
  if (!q8rt_add_size(total, tmp, &total) || total > (SIZE_MAX / sizeof(float)) / 2) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensors are too large", n->op_type, n->name);
  }
  int64_t count;
  const int64_t yd[4] = {seq, D, batch, H};
  if (!q8rt_shape_elements(yd, 4, &count)) {
    return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': output Y is too large", n->op_type, n->name);
  }
  if (p->quantized) {
    /* per direction (dq_dir_floats): xw [S*B][4H], h, c and the h block [B][H], gates, bias sum and
     * acc [4H], tmp [H], hq [B*H] bytes (+ 3); then xq [S*B*I] bytes (+ 3) */
    size_t rows, f, bh, bytes;
    if (!q8rt_mul_size((size_t)seq, (size_t)batch, &rows) || !q8rt_mul_size(rows, gh, &f) ||
        !q8rt_mul_size((size_t)batch, (size_t)H, &bh) || bh > SIZE_MAX / 8 ||
        !q8rt_add_size(f, 3 * bh + 3 * gh + (size_t)H + (bh + 3 + sizeof(float) - 1) / sizeof(float), &f) ||
        !q8rt_mul_size(f, (size_t)D, &f) || !q8rt_mul_size(rows, (size_t)isz, &bytes) ||
        !q8rt_add_size(f, bytes / sizeof(float) + 1, &total) || total > (SIZE_MAX / sizeof(float)) / 2) {
      return q8rt_fail(err, Q8RT_ERROR_SHAPE, "%s node '%s': tensors are too large", n->op_type, n->name);
    }
  }
  rnn_geom *gm = geom;
  gm->seq = (size_t)seq;
  gm->batch = (size_t)batch;
  gm->input = (size_t)isz;
  gm->hidden = (size_t)H;
  gm->n_out = n->n_outputs;
  gm->has_b = has[3];
  gm->has_len = has[4];
  gm->has_h0 = has[5];
  gm->has_c0 = p->kind == RNN_LSTM && has[6];
  gm->has_p = p->kind == RNN_LSTM && has[7];
  gm->ws_wt = 0;
  gm->ws_rt = wt;
  gm->ws_bias = wt + rt;
  gm->ws_vec = wt + rt + (size_t)D * (size_t)(G + 1) * (size_t)H;
  gm->ws_xw = gm->ws_vec + vec;
  gm->ws_tmp = gm->ws_xw + xw;
  gm->ws_total = total;
  return Q8RT_OK;
}

static size_t rnn_workspace(const void *params, const void *geom, size_t threads) {
  (void)params;
  (void)threads;
  const rnn_geom *gm = geom;
  return gm->ws_total * sizeof(float);
}

/* ---- run ------------------------------------------------------------------------------------- */

static void add_bias_clip(const rnn_params *p, const float *b, float *v, size_t n) {
  if (b != NULL) p->vadd(n, v, b, v);
  if (p->has_clip) {
    const float c = p->clip;
    for (size_t i = 0; i < n; i++) v[i] = v[i] > c ? c : v[i] < -c ? -c : v[i];
  }
}

/* c[0..N) (+)= sum_k a[k] * bt[k * ldb + 0..N) as MLAS computes it: zero_first = 1 for a GEMM with
 * beta 0 (the first block's sum is stored), 0 for beta 1 (every block's sum is added onto c). */
static void gemm_row(q8rt_f32_vfmac_ukernel_fn fmac, size_t K, size_t N, const float *a, const float *bt, size_t ldb,
                     float *c, float *blk, int zero_first) {
  if (K == 0 && zero_first) {
    for (size_t j = 0; j < N; j++) c[j] = 0.0f;
  }
  for (size_t k0 = 0; k0 < K; k0 += RNN_SGEMM_KBLOCK) {
    const size_t k1 = K - k0 < RNN_SGEMM_KBLOCK ? K : k0 + RNN_SGEMM_KBLOCK;
    float *acc = k0 == 0 && zero_first ? c : blk;
    for (size_t j = 0; j < N; j++) acc[j] = 0.0f;
    for (size_t k = k0; k < k1; k++) fmac(N, a[k], bt + k * ldb, acc);
    if (acc == blk) {
      for (size_t j = 0; j < N; j++) c[j] = blk[j] + c[j];
    }
  }
}

/* One LSTM step for one batch row: g holds the gate pre-activations (x * W^T + h * R^T, iofc);
 * c and h are updated in place. */
static void lstm_cell(const rnn_params *p, const rnn_act *act, const float *bd, const float *Pd, float *g, float *c,
                      float *h, float *tmp, size_t H) {
  float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
  if (Pd != NULL) {
    for (size_t j = 0; j < H; j++) gi[j] = gi[j] + c[j] * Pd[j];
  }
  add_bias_clip(p, bd, gi, H);
  act_apply(&act[0], gi, H);
  if (p->input_forget) {
    for (size_t j = 0; j < H; j++) gf[j] = 1.0f - gi[j];
  } else {
    if (Pd != NULL) {
      for (size_t j = 0; j < H; j++) gf[j] = gf[j] + c[j] * Pd[2 * H + j];
    }
    add_bias_clip(p, bd != NULL ? bd + 2 * H : NULL, gf, H);
    act_apply(&act[0], gf, H);
  }
  add_bias_clip(p, bd != NULL ? bd + 3 * H : NULL, gc, H);
  act_apply(&act[1], gc, H);
  /* c = c * gf + gi * gc (gc is not read after this) */
  p->vmul(H, gi, gc, gc);
  p->vmul(H, c, gf, c);
  p->vadd(H, c, gc, c);
  if (Pd != NULL) {
    for (size_t j = 0; j < H; j++) go[j] = go[j] + c[j] * Pd[H + j];
  }
  add_bias_clip(p, bd != NULL ? bd + H : NULL, go, H);
  act_apply(&act[0], go, H);
  memcpy(tmp, c, H * sizeof(float));
  act_apply(&act[2], tmp, H);
  p->vmul(H, tmp, go, h);
}

/* A run's inputs and outputs by name; NULL where the model leaves them out. */
typedef struct rnn_io {
  const float *X, *Bias, *H0, *C0, *P;
  const int32_t *lens;
  float *Y, *Yh, *Yc;
} rnn_io;

static void rnn_io_get(const rnn_params *p, const rnn_geom *gm, const op_tensor *in, op_tensor *out, rnn_io *io) {
  io->X = in[0].data;
  io->Bias = gm->has_b ? in[3].data : NULL;
  io->lens = gm->has_len ? in[4].data : NULL;
  io->H0 = gm->has_h0 ? in[5].data : NULL;
  io->C0 = gm->has_c0 ? in[6].data : NULL;
  io->P = gm->has_p ? in[7].data : NULL;
  io->Y = out[0].data;
  io->Yh = gm->n_out > 1 ? out[1].data : NULL;
  io->Yc = p->kind == RNN_LSTM && gm->n_out > 2 ? out[2].data : NULL;
}

/* Batch row b's sequence length: sequence_lens[b] clamped to [0, S]; S without sequence_lens. */
static size_t rnn_seq_len(const int32_t *lens, size_t b, size_t S) {
  if (lens == NULL) return S;
  return lens[b] < 0 ? 0 : (size_t)lens[b] > S ? S : (size_t)lens[b];
}

typedef struct rnn_job {
  const rnn_params *p;
  const rnn_geom *gm;
  rnn_io io;
  const float *wt, *rt, *bias;
  float *xw, *tmp, *vec;
  size_t rows, rblocks, cblocks; /* rows = S * B: X's rows, in X's order */
  /* x * W^T before the steps: rows [xr0[d], xr1[d]) of direction d (all rows, or with `fuse` the
   * rows of its first 8 steps, see lstm_step_fused) */
  size_t xr0[2], xr1[2];
  int fuse;
} rnn_job;

/* x * W^T on the packed route: item = direction, block of 64 rows, block of 4 panels; the K blocks
 * in order, each one chain from 0, later blocks' sums added onto the first's (as gemm_row) */
static void xw_item(void *arg, size_t item) {
  const rnn_job *j = arg;
  const rnn_params *p = j->p;
  const size_t GH = (size_t)p->gates * j->gm->hidden, I = j->gm->input, cols = 4 * p->nr;
  const size_t per_dir = j->rblocks * j->cblocks, d = item / per_dir, rest = item % per_dir;
  const size_t r0 = j->xr0[d] + rest / j->cblocks * 64, c0 = rest % j->cblocks * cols;
  if (r0 >= j->xr1[d]) return;
  const size_t r1 = r0 + 64 < j->xr1[d] ? r0 + 64 : j->xr1[d], c1 = c0 + cols < GH ? c0 + cols : GH;
  const size_t blk_n = kblock_floats(I, GH, p->nr);
  float *c = j->xw + d * j->rows * GH, *t = j->tmp + d * j->rows * GH;
  for (size_t k0 = 0, b = 0; k0 < I; k0 += RNN_SGEMM_KBLOCK, b++) {
    const size_t kn = I - k0 < RNN_SGEMM_KBLOCK ? I - k0 : RNN_SGEMM_KBLOCK;
    const float *wp = p->wpack + d * p->wpack_dir + b * blk_n + c0 * kn;
    float *dst = b == 0 ? c : t;
    p->gemm(r1 - r0, c1 - c0, kn, j->io.X + r0 * I + k0, I, wp, dst + r0 * GH + c0, GH);
    if (b > 0) {
      for (size_t r = r0; r < r1; r++) {
        p->vadd(c1 - c0, t + r * GH + c0, c + r * GH + c0, c + r * GH + c0);
      }
    }
  }
}

/* c[0..n) (+)= a[0..H) * R^T over the columns of segment seg (0: [0, n); 1: GRU's h, [2H, 3H)), as
 * gemm_row computes it: on R packed at load with the register-tiled kernel (one row), else on R^T
 * with the row kernel */
static void r_product(const rnn_job *j, size_t d, int seg, size_t n, const float *a, float *c, float *blk,
                      int zero_first) {
  const rnn_params *p = j->p;
  const size_t H = j->gm->hidden, GH = (size_t)p->gates * H;
  if (p->rpack == NULL) {
    gemm_row(p->fmac, H, n, a, j->rt + d * H * GH + (seg ? 2 * H : 0), GH, c, blk, zero_first);
    return;
  }
  /* h = 0 (every step 0 without initial_h or with a zero one; GRU's r . h then too): with R finite
   * every product is a zero and each K block's fma chain stays +0.0f, so the sums are known without
   * reading R: c = +0 (zero_first), else c = +0 + c once per block (-0 becomes +0, then no change) */
  if (p->rfinite[d]) {
    size_t k = 0;
    while (k < H && a[k] == 0.0f) k++;
    if (k == H) {
      for (size_t q = 0; q < n; q++) c[q] = zero_first ? 0.0f : 0.0f + c[q];
      return;
    }
  }
  const float *rp = p->rpack + d * p->rpack_dir + (seg ? p->rseg1 : 0);
  for (size_t k0 = 0, b = 0; k0 < H; k0 += RNN_SGEMM_KBLOCK, b++) {
    const size_t kn = H - k0 < RNN_SGEMM_KBLOCK ? H - k0 : RNN_SGEMM_KBLOCK;
    float *acc = k0 == 0 && zero_first ? c : blk;
    p->gemm(1, n, kn, a + k0, kn, rp + b * kblock_floats(H, n, p->nr), acc, n);
    if (acc == blk) {
      p->vadd(n, blk, c, c);
    }
  }
}

/* The fused schedule (rnn_run's `fuse`: LSTM, bidirectional, its two directions on the pool, one
 * batch entry, no sequence_lens, R and W packed in f32-gemm's panels of 32, 4H a multiple of 128,
 * an f32-gemvgemm kernel). A step's h * R^T streams R (4 MiB in CRNN) at the core's L3 read rate
 * with the fma units mostly idle, and x * W^T is compute-bound: each direction computes the rows
 * of x * W^T that its later steps need beside its own steps' R panels, instead of both directions'
 * rows before the steps. A direction's rows go in tiles of 8 in the order its steps need them
 * (forward: rows [8i, 8i + 8), reverse: [S - 8i - 8, S - 8i), clipped to [0, S)): tile 0 before
 * the steps (xw_item), tile i >= 1 during steps 8i - 8 .. 8i - 1, an eighth of its units in each.
 * A unit is one 32-column panel of W over one K block for the tile, u = panel * blocks + block, so
 * a panel's blocks come in order and each block after the first is added onto the sum as xw_item
 * adds it: the same chains, the same additions, the same bytes. A step's units go one beside every
 * other call or so (spread evenly); any left over run on f32-gemm after its R product. Measured on
 * Zen 4 (CRNN, 2 threads): 3.92-4.00 ms a run against 4.03-4.09 (5 alternating rounds). On one
 * thread the directions run in turn and the tiles' W panels come back from memory 4 times, which
 * measured no better than x * W^T first (each panel read once), so that case keeps the plain
 * schedule. */
static void xw_tile_rows(size_t S, int rev, size_t i, size_t *lo, size_t *hi) {
  if (!rev) {
    *lo = 8 * i;
    *hi = 8 * i + 8 < S ? 8 * i + 8 : S;
  } else {
    *hi = S - 8 * i;
    *lo = *hi > 8 ? *hi - 8 : 0;
  }
}

/* units [u, u1) of direction d's tile of rows [lo, lo + m) */
typedef struct xw_span {
  size_t d, u, u1, lo, m;
} xw_span;

/* Unit u: its A rows, W panel, K length, destination (the first K block into x * W^T, the others
 * into the second array, added by xw_unit_done) and K block */
static size_t xw_unit(const rnn_job *j, const xw_span *sp, size_t u, const float **a, const float **wp, float **dst,
                      size_t *b_out) {
  const rnn_params *p = j->p;
  const size_t I = j->gm->input, GH = 4 * j->gm->hidden, nbw = (I + RNN_SGEMM_KBLOCK - 1) / RNN_SGEMM_KBLOCK;
  const size_t b = u % nbw, pn = u / nbw, k0 = b * RNN_SGEMM_KBLOCK;
  const size_t kw = I - k0 < RNN_SGEMM_KBLOCK ? I - k0 : RNN_SGEMM_KBLOCK;
  *b_out = b;
  *a = j->io.X + sp->lo * I + k0;
  *wp = p->wpack + sp->d * p->wpack_dir + b * kblock_floats(I, GH, p->nr) + pn * 32 * kw;
  *dst = (b == 0 ? j->xw : j->tmp) + (sp->d * j->rows + sp->lo) * GH + pn * 32;
  return kw;
}

static void xw_unit_done(const rnn_job *j, const float *dst, size_t m, size_t b) {
  if (b == 0) return;
  const size_t GH = 4 * j->gm->hidden, off = (size_t)(dst - j->tmp);
  for (size_t r = 0; r < m; r++) {
    const float *t = j->tmp + off + r * GH;
    float *x = j->xw + off + r * GH;
    for (size_t q = 0; q < 32; q++) x[q] = t[q] + x[q];
  }
}

/* c[0..4H) += h * R^T of direction d as r_product computes it (zero_first 0), with the units of
 * sp beside it */
static void lstm_step_fused(const rnn_job *j, size_t d, const float *h, float *c, float *blk, const xw_span *sp) {
  size_t u = sp->u;
  const size_t u1 = sp->u1;
  const rnn_params *p = j->p;
  const size_t H = j->gm->hidden, I = j->gm->input, GH = 4 * H;
  /* the units spread evenly over the calls (call ci takes one when (ci + 1) * nu / calls passes
   * an integer): measured on Zen 4 with CRNN's shapes, a step with a tile of 8 rows beside every
   * other call took 53 us against 44 us for the R product alone and 64 us for both in turn */
  const size_t nu = u1 - u, calls = (H + RNN_SGEMM_KBLOCK - 1) / RNN_SGEMM_KBLOCK * (GH / 128);
  const float *a, *wp;
  float *dst;
  const size_t m = sp->m;
  size_t bw, k = 0;
  if (p->rfinite[d]) {
    while (k < H && h[k] == 0.0f) k++;
  }
  if (p->rfinite[d] && k == H) {
    /* h = 0: r_product's known sums */
    for (size_t q = 0; q < GH; q++) c[q] = 0.0f + c[q];
  } else {
    const float *rp = p->rpack + d * p->rpack_dir;
    size_t ci = 0;
    for (size_t k0 = 0, b = 0; k0 < H; k0 += RNN_SGEMM_KBLOCK, b++) {
      const size_t kr = H - k0 < RNN_SGEMM_KBLOCK ? H - k0 : RNN_SGEMM_KBLOCK;
      const float *rb = rp + b * kblock_floats(H, GH, p->nr);
      for (size_t g = 0; g < GH; g += 128, ci++) {
        if (u < u1 && (ci + 1) * nu / calls != ci * nu / calls) {
          const size_t kw = xw_unit(j, sp, u, &a, &wp, &dst, &bw);
          p->gemvgemm(kr, h + k0, rb + g * kr, blk + g, m, kw, a, I, wp, dst, GH);
          xw_unit_done(j, dst, m, bw);
          u++;
        } else {
          p->gemvgemm(kr, h + k0, rb + g * kr, blk + g, 0, 0, NULL, 0, NULL, NULL, 0);
        }
      }
      p->vadd(GH, blk, c, c);
    }
  }
  for (; u < u1; u++) {
    const size_t kw = xw_unit(j, sp, u, &a, &wp, &dst, &bw);
    p->gemm(m, 32, kw, a, I, wp, dst, GH);
    xw_unit_done(j, dst, m, bw);
  }
}

/* One direction: x * W^T of every row on the row kernel unless the packed GEMM did it, then the
 * steps of each batch entry */
static void dir_item(void *arg, size_t d) {
  const rnn_job *j = arg;
  const rnn_params *p = j->p;
  const rnn_geom *gm = j->gm;
  const rnn_io *io = &j->io;
  const size_t S = gm->seq, B = gm->batch, I = gm->input, H = gm->hidden, G = (size_t)p->gates;
  const size_t D = (size_t)p->dirs, GH = G * H;
  float *hr = j->vec + d * 6 * GH, *h = hr + GH, *c = h + H, *tmp = c + H, *blk = tmp + H;
  float *xwd = j->xw + d * j->rows * GH;
  if (p->wpack == NULL) {
    for (size_t r = 0; r < j->rows; r++)
      gemm_row(p->fmac, I, GH, io->X + r * I, j->wt + d * I * GH, GH, xwd + r * GH, blk, 1);
  }
  const int rev = p->reverse || d == 1;
  const rnn_act *act = &p->acts[d * (size_t)p->n_acts_per_dir];
  const float *bd = io->Bias != NULL ? j->bias + d * (G + 1) * H : NULL;
  const float *Pd = io->P != NULL ? io->P + d * 3 * H : NULL;
  for (size_t b = 0; b < B; b++) {
    const size_t len = rnn_seq_len(io->lens, b, S);
    /* state index [d][b] (layout 1: [b][d]) */
    const size_t sidx = p->layout ? (b * D + d) * H : (d * B + b) * H;
    for (size_t q = 0; q < H; q++) {
      h[q] = io->H0 != NULL ? io->H0[sidx + q] : 0.0f;
      c[q] = io->C0 != NULL ? io->C0[sidx + q] : 0.0f;
    }
    for (size_t step = 0; step < len; step++) {
      const size_t t = rev ? len - 1 - step : step;
      float *xw = xwd + (p->layout ? b * S + t : t * B + b) * GH;
      if (p->kind == RNN_LSTM) {
        /* h * R^T added onto x * W^T (ORT's second GEMM, beta = 1), in place: the step's row of
         * x * W^T is read by this step only */
        if (j->fuse) {
          /* tile i of the direction's rows during steps 8i - 8 .. 8i - 1 */
          const size_t U = GH / 32 * ((I + RNN_SGEMM_KBLOCK - 1) / RNN_SGEMM_KBLOCK);
          const size_t tile = step / 8 + 1, part = step % 8;
          xw_span sp = {d, 0, 0, 0, 0};
          if (8 * tile < S) {
            size_t hi;
            xw_tile_rows(S, rev, tile, &sp.lo, &hi);
            sp.m = hi - sp.lo;
            sp.u = part * U / 8;
            sp.u1 = (part + 1) * U / 8;
          }
          lstm_step_fused(j, d, h, xw, blk, &sp);
        } else {
          r_product(j, d, 0, GH, h, xw, blk, 0);
        }
        lstm_cell(p, act, bd, Pd, xw, c, h, tmp, H);
      } else if (p->kind == RNN_SIMPLE) {
        /* ORT's rnn.cc: y = h * R^T (beta 0), skipped (y = 0) at its first time step without
         * initial_h, which is this entry's first step unless a reverse run starts past its length
         * (ORT then multiplies the zero frame it copied); y + (x * W^T + (Wb + Rb)); clip, f() */
        if (step == 0 && io->H0 == NULL && (!rev || len == S)) {
          memset(hr, 0, H * sizeof(float));
        } else {
          r_product(j, d, 0, H, h, hr, blk, 1);
        }
        if (bd != NULL) {
          for (size_t q = 0; q < H; q++) hr[q] = hr[q] + (xw[q] + bd[q]);
        } else {
          for (size_t q = 0; q < H; q++) hr[q] = hr[q] + xw[q];
        }
        add_bias_clip(p, NULL, hr, H);
        for (size_t q = 0; q < H; q++) h[q] = ort_rnn_act(act, hr[q]);
      } else {
        /* z and r: h * R[zr]^T added onto x * W[zr]^T, then + (Wb + Rb) */
        memcpy(hr, xw, 2 * H * sizeof(float));
        r_product(j, d, 0, 2 * H, h, hr, blk, 0);
        float *gz = hr, *gr = hr + H, *gh = xw + 2 * H;
        add_bias_clip(p, bd, gz, H);
        act_apply(&act[0], gz, H);
        add_bias_clip(p, bd != NULL ? bd + H : NULL, gr, H);
        if (p->linear_before_reset) {
          /* h * Rh^T + Rbh: ORT's GEMM runs onto Rbh (beta 1) when there is a bias, else beta 0 */
          float *lin = hr + 2 * H;
          if (bd != NULL) memcpy(lin, bd + 3 * H, H * sizeof(float));
          r_product(j, d, 1, H, h, lin, blk, bd == NULL);
          gru_reset_gate(&act[0], lin, gr, tmp, H);
          for (size_t q = 0; q < H; q++) gh[q] = gh[q] + tmp[q];
        } else {
          /* (r . h) * Rh^T added onto x * Wh^T */
          gru_reset_gate(&act[0], h, gr, tmp, H);
          r_product(j, d, 1, H, tmp, gh, blk, 0);
        }
        add_bias_clip(p, bd != NULL ? bd + 2 * H : NULL, gh, H);
        gru_output_gate(&act[1], gh, gz, h, H);
      }
      if (io->Y != NULL) {
        float *yt = io->Y + (p->layout ? ((b * S + t) * D + d) * H : ((t * D + d) * B + b) * H);
        memcpy(yt, h, H * sizeof(float));
      }
    }
    if (io->Yh != NULL) memcpy(io->Yh + sidx, h, H * sizeof(float));
    if (io->Yc != NULL) memcpy(io->Yc + sidx, c, H * sizeof(float));
  }
}

static void rnn_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                    const op_exec_ctx *ctx) {
  const rnn_params *p = params;
  const rnn_geom *gm = geom;
  const size_t S = gm->seq, B = gm->batch, I = gm->input, H = gm->hidden, G = (size_t)p->gates;
  const size_t D = (size_t)p->dirs, GH = G * H;
  float *ws = workspace;
  rnn_job j = {.p = p, .gm = gm, .wt = p->wt, .rt = p->rt, .bias = ws + gm->ws_bias};
  rnn_io_get(p, gm, in, out, &j.io);
  j.xw = ws + gm->ws_xw;
  j.tmp = ws + gm->ws_tmp;
  j.vec = ws + gm->ws_vec;
  j.rows = S * B;
  /* graph-input W / R: transposed here, wt[d][k][j] = W[d][j][k] */
  const float *W = in[1].data, *R = in[2].data;
  if (p->wt == NULL && p->wpack == NULL) {
    float *wt = ws + gm->ws_wt;
    for (size_t d = 0; d < D; d++) {
      for (size_t q = 0; q < GH; q++) {
        for (size_t k = 0; k < I; k++) wt[(d * I + k) * GH + q] = W[(d * GH + q) * I + k];
      }
    }
    j.wt = wt;
  }
  if (p->rt == NULL && p->rpack == NULL) {
    float *rt = ws + gm->ws_rt;
    for (size_t d = 0; d < D; d++) {
      for (size_t q = 0; q < GH; q++) {
        for (size_t k = 0; k < H; k++) rt[(d * H + k) * GH + q] = R[(d * GH + q) * H + k];
      }
    }
    j.rt = rt;
  }
  /* bias[d]: LSTM Wb + Rb per gate; GRU Wb + Rb for z, r, and h without linear_before_reset,
   * else Wbh at [2H, 3H) and Rbh at [3H, 4H) */
  if (j.io.Bias != NULL) {
    for (size_t d = 0; d < D; d++) {
      float *bd = ws + gm->ws_bias + d * (G + 1) * H;
      const float *wb = j.io.Bias + d * 2 * GH, *rb = wb + GH;
      for (size_t q = 0; q < GH; q++) bd[q] = wb[q] + rb[q];
      if (p->kind == RNN_GRU && p->linear_before_reset) {
        for (size_t q = 0; q < H; q++) {
          bd[2 * H + q] = wb[2 * H + q];
          bd[3 * H + q] = rb[2 * H + q];
        }
      }
    }
  }
  if (j.io.Y != NULL) memset(j.io.Y, 0, S * D * B * H * sizeof(float));
  /* the directions' recurrences are independent: two items on the pool; when the pool shares
   * them, each computes its later rows of x * W^T beside its steps (fuse) */
  const size_t dir_cost = j.rows * GH * (I + H);
  j.fuse = D == 2 && op_would_split(ctx, D, dir_cost, 1 << 15) && p->gemvgemm != NULL && p->wpack != NULL &&
           p->rpack != NULL && B == 1 && S > 8 && j.io.lens == NULL && GH % 128 == 0;
  for (size_t d = 0; d < D; d++) {
    j.xr0[d] = 0;
    j.xr1[d] = j.rows;
    if (j.fuse) xw_tile_rows(S, d == 1, 0, &j.xr0[d], &j.xr1[d]);
  }
  if (p->wpack != NULL && j.rows > 0) {
    /* items of up to 64 rows x 4 panels, each worth the multiply-adds of its rows: one step's row
     * (vad16k's LSTM: 1 x 512 x 128) is four items of 2^14, ~2 us in all, which stays on the caller
     * (counted as 64 rows each, it split and the run waited for the pool) */
    const size_t rows = j.xr1[0] - j.xr0[0], mrows = rows < 64 ? rows : 64;
    j.rblocks = (rows + 63) / 64;
    j.cblocks = (GH + 4 * p->nr - 1) / (4 * p->nr);
    op_parallel_items(ctx, D * j.rblocks * j.cblocks, mrows * 4 * p->nr * I, 1 << 15, xw_item, &j);
  }
  op_parallel_items(ctx, D, dir_cost, 1 << 15, dir_item, &j);
}

/* u8 parameters of a block as ORT's GetQuantizationParameter and the quantized values (MLAS
 * QuantizeLinear): DynamicQuantizeLinear's arithmetic on its kernels (f32-rminmax, f32-qint-vcvt). */
static void dq_block(const rnn_params *p, const float *x, size_t n, uint8_t *q, float *scale, int32_t *zp) {
  float lo = FLT_MAX, hi = -FLT_MAX;
  p->minmax(n, x, &lo, &hi);
  qk_u8_params_from_range(lo, hi, scale, zp);
  const q8rt_f32_qint_vcvt_params kp = {*scale, *zp, (float)(0 - *zp), (float)(255 - *zp)};
  p->quant.qu8(n, x, q, &kp);
}

/* acc[0..N) = sum_k (a[k] - azp) * w[k][0..N) (w already minus its zero point): exact int32
 * (products fit in int32; the sums are kept as uint32 so that a hostile K wraps as ORT's int32
 * does instead of overflowing a signed int) */
static void dq_row(size_t K, size_t N, const uint8_t *a, int32_t azp, const int16_t *w, uint32_t *restrict acc) {
  for (size_t j = 0; j < N; j++) acc[j] = 0;
  for (size_t k = 0; k < K; k++) {
    const int32_t av = (int32_t)a[k] - azp;
    if (av == 0) continue;
    const int16_t *restrict wr = w + k * N;
    for (size_t j = 0; j < N; j++) acc[j] += (uint32_t)(av * (int32_t)wr[j]);
  }
}

/* The output stage of dq_gemm for columns [lo, hi) of every row: acc's int32 sums (the int32 GEMM
 * kernels' raw accumulators when g->fn is set, corrected here) to float into y (which may be acc).
 * Element by element, so any split of the columns gives the same bytes. */
static void dq_stage(const rnn_params *p, const gemm_i32 *g, size_t K, size_t N, const uint8_t *a, size_t rows,
                     int32_t azp, uint32_t *acc, float s, const float *cs, int cols, const float *bias, float *y,
                     size_t lo, size_t hi) {
  const size_t n = hi - lo;
  for (size_t r = 0; r < rows; r++) {
    q8rt_s32_vcvt_params vp;
    memset(&vp, 0, sizeof(vp));
    const uint32_t *colsum = NULL;
    if (g->fn != NULL) {
      uint32_t rs = 0;
      if (g->need_rowsum) gemm_i32_row_sums(g, a + r * K, K, 1, 0, (uint32_t)azp, &rs);
      vp.c = 0u - g->d[0] * rs;
      vp.e = (uint32_t)azp;
      colsum = g->wsum + lo;
    }
    int32_t *ar = (int32_t *)(acc + r * N) + lo;
    float *yr = y + r * N + lo;
    const float *br = bias != NULL ? bias + r * N + lo : NULL;
    if (cols == 1) {
      vp.scale = s * cs[0];
      vp.mode = br != NULL ? Q8RT_S32_VCVT_SCALE_BIASV : Q8RT_S32_VCVT_SCALE;
      vp.biasv = br;
      p->vcvt(n, ar, colsum, yr, &vp);
    } else {
      vp.mode = Q8RT_S32_VCVT_INT32;
      p->vcvt(n, ar, colsum, ar, &vp);
      for (size_t j = 0; j < n; j++) {
        const float v = (float)ar[j] * (s * cs[lo + j]);
        yr[j] = br != NULL ? v + br[j] : v;
      }
    }
  }
}

/* rows [rows][N] of sum_k (a[r][k] - azp) * (w[k][j] - w_zp) modulo 2^32, as dq_row, into acc, then
 * to float by s32-f32-vcvt into y (which may be acc):
 *   y[r][j] = (float)acc[r][j] * (s * cs[j]) [+ bias[r][j]]
 * (cs: one scale (cols == 1) or one per column; bias NULL or rows of N). On the int32 GEMM kernels
 * when the CPU has one (their raw accumulator, corrected in the vcvt stage: - azp * wsum[j] -
 * d * rowsum, d the direction's one weight zero-point term, see gemm_i32 in conv_paths.h), else
 * the dq_row loop. a may be read up to 3 bytes past its last row. */
static void dq_gemm(const rnn_params *p, const gemm_i32 *g, size_t K, size_t N, const uint8_t *a, size_t rows,
                    int32_t azp, const int16_t *w, uint32_t *acc, float s, const float *cs, int cols, const float *bias,
                    float *y) {
  if (g->fn == NULL) {
    for (size_t r = 0; r < rows; r++) dq_row(K, N, a + r * K, azp, w, acc + r * N);
  } else {
    gemm_i32_rows(g, 0, a, K, rows, (int32_t *)acc, N * sizeof(int32_t), 0);
  }
  dq_stage(p, g, K, N, a, rows, azp, acc, s, cs, cols, bias, y, 0, N);
}

/* dq_gemm with its columns split over the pool (a unidirectional node's x * W and each step's
 * h * R: one direction, nothing else to share): items of DQ_SPLIT_COLS columns (rounded up to
 * whole panels of the kernel), each its columns' GEMM over every row and their output stage. The
 * items depend on the sizes alone, and every output element is the same int32 sum and the same
 * stage as dq_gemm's: the same bytes for any thread count. */
#define DQ_SPLIT_COLS 256
typedef struct dq_split {
  const rnn_params *p;
  const gemm_i32 *g;
  size_t K, N, rows, chunk;
  const uint8_t *a;
  int32_t azp;
  uint32_t *acc;
  float s;
  const float *cs, *bias;
  int cols;
  float *y;
} dq_split;

static void dq_split_item(void *arg, size_t i) {
  const dq_split *j = arg;
  const size_t lo = i * j->chunk, hi = j->N - lo < j->chunk ? j->N : lo + j->chunk;
  gemm_i32_cols(j->g, 0, j->a, j->K, j->rows, lo, hi, (int32_t *)j->acc, j->N * sizeof(int32_t), 0);
  dq_stage(j->p, j->g, j->K, j->N, j->a, j->rows, j->azp, j->acc, j->s, j->cs, j->cols, j->bias, j->y, lo, hi);
}

/* dq_gemm, split over ctx's pool when there is one (ctx not NULL), the int32 kernels run it and the
 * work pays: a grain is 2^18 multiply-adds of the tiled kernel, but a one- or two-row GEMM streams
 * its packed B once per row at memory speed (a step's h * R: 4H x H bytes), so there a grain is
 * 2^16: R of 512 KiB and more splits (hidden size 362 and up; open-voicefilter-lite's 4 x 512 x 512
 * R, 1 MiB, in 8 items), smaller ones stay whole (a step of hidden size 256 takes ~3 us alone). */
static void dq_gemm_split(const op_exec_ctx *ctx, const rnn_params *p, const gemm_i32 *g, size_t K, size_t N,
                          const uint8_t *a, size_t rows, int32_t azp, const int16_t *w, uint32_t *acc, float s,
                          const float *cs, int cols, const float *bias, float *y) {
  if (ctx != NULL && g->fn != NULL && N > 0) {
    size_t chunk = (DQ_SPLIT_COLS + g->nr - 1) / g->nr * g->nr;
    const size_t items = (N + chunk - 1) / chunk;
    size_t cost;
    if (!q8rt_mul_size(rows, K, &cost) || !q8rt_mul_size(cost, chunk, &cost)) cost = SIZE_MAX;
    const size_t grain = rows <= 2 ? (size_t)1 << 16 : (size_t)1 << 18;
    if (op_would_split(ctx, items, cost, grain)) {
      dq_split j = {.p = p,
                    .g = g,
                    .K = K,
                    .N = N,
                    .rows = rows,
                    .chunk = chunk,
                    .a = a,
                    .azp = azp,
                    .acc = acc,
                    .s = s,
                    .cs = cs,
                    .bias = bias,
                    .cols = cols,
                    .y = y};
      op_parallel_items(ctx, items, cost, grain, dq_split_item, &j);
      return;
    }
  }
  dq_gemm(p, g, K, N, a, rows, azp, w, acc, s, cs, cols, bias, y);
}

/* DynamicQuantizeLSTM as ORT runs it (UniDirectionalLstm with uint8 GEMMs): X's rows [0, max_len)
 * are quantized as one block (one scale and zero point) and multiplied by W once per direction;
 * each step quantizes the hidden states of all batch rows as one block and adds h * R onto x * W:
 *   gate = (float)acc_h * (h_scale * r_scale[j]) + (float)acc_x * (x_scale * w_scale[j])
 * then the float LSTM cell with (Wb + Rb). The directions share only the quantized X, so a
 * bidirectional node runs them as two items on the pool, each in its own part of the workspace
 * (dq_dir_floats): x * W, its steps and its outputs' slices. */
typedef struct dq_job {
  const rnn_params *p;
  const rnn_geom *gm;
  rnn_io io;
  float *ws;              /* D parts of dq_dir_floats(gm) floats */
  const uint8_t *xq;      /* X quantized, [max_len * B][I] */
  const op_exec_ctx *ctx; /* the pool for the GEMMs' columns (one direction); NULL: none */
  float xs;
  int32_t xzp;
  size_t max_len;
} dq_job;

/* floats per direction: xw [S*B][4H], h, c and the h block [B][H], gates, bias sum and acc [4H],
 * tmp [H], then hq [B*H] bytes (+ 3 bytes the GEMM may read past its row) as floats */
static size_t dq_dir_floats(const rnn_geom *gm) {
  const size_t GH = 4 * gm->hidden, BH = gm->batch * gm->hidden;
  return gm->seq * gm->batch * GH + 3 * BH + 3 * GH + gm->hidden + (BH + 3 + sizeof(float) - 1) / sizeof(float);
}

static void dq_dir_item(void *arg, size_t d) {
  const dq_job *jb = arg;
  const rnn_params *p = jb->p;
  const rnn_io *io = &jb->io;
  const size_t S = jb->gm->seq, B = jb->gm->batch, I = jb->gm->input, H = jb->gm->hidden, GH = 4 * H;
  const size_t D = (size_t)p->dirs, max_len = jb->max_len;
  float *xw = jb->ws + d * dq_dir_floats(jb->gm);
  float *hs = xw + S * B * GH, *cs = hs + B * H, *hblk = cs + B * H, *g = hblk + B * H, *bsum = g + GH,
        *tmp = bsum + GH;
  uint32_t *acc = (uint32_t *)(tmp + H);
  uint8_t *hq = (uint8_t *)(acc + GH);
  const int rev = p->reverse || d == 1;
  const rnn_act *act = &p->acts[d * 3];
  /* NULL when every direction has its GEMM packing (dq_gemm then never reads them) */
  const int16_t *qw = p->qw != NULL ? p->qw + d * I * GH : NULL, *qr = p->qr != NULL ? p->qr + d * H * GH : NULL;
  const float *wsc = p->w_scale + d * (size_t)p->w_scale_cols, *rsc = p->r_scale + d * (size_t)p->r_scale_cols;
  const float *Pd = io->P != NULL ? io->P + d * 3 * H : NULL;
  if (io->Bias != NULL) {
    const float *wb = io->Bias + d * 2 * GH, *rb = wb + GH;
    for (size_t j = 0; j < GH; j++) bsum[j] = wb[j] + rb[j];
  }
  /* the int32 sums of every row in place, scaled to float */
  dq_gemm_split(jb->ctx, p, &p->gw[d], I, GH, jb->xq, max_len * B, jb->xzp, qw, (uint32_t *)xw, jb->xs, wsc,
                p->w_scale_cols, NULL, xw);
  for (size_t b = 0; b < B; b++) {
    const size_t sidx = (d * B + b) * H;
    for (size_t j = 0; j < H; j++) {
      hs[b * H + j] = io->H0 != NULL ? io->H0[sidx + j] : 0.0f;
      cs[b * H + j] = io->C0 != NULL ? io->C0[sidx + j] : 0.0f;
    }
  }
  for (size_t step = 0; step < max_len; step++) {
    for (size_t b = 0; b < B; b++) {
      const size_t len = rnn_seq_len(io->lens, b, S);
      for (size_t j = 0; j < H; j++) hblk[b * H + j] = step < len ? hs[b * H + j] : 0.0f;
    }
    float hsc;
    int32_t hzp;
    dq_block(p, hblk, B * H, hq, &hsc, &hzp);
    for (size_t b = 0; b < B; b++) {
      const size_t len = rnn_seq_len(io->lens, b, S);
      if (step >= len) continue;
      const size_t t = rev ? len - 1 - step : step;
      dq_gemm_split(jb->ctx, p, &p->gr[d], H, GH, hq + b * H, 1, hzp, qr, acc, hsc, rsc, p->r_scale_cols,
                    xw + (t * B + b) * GH, g);
      lstm_cell(p, act, io->Bias != NULL ? bsum : NULL, Pd, g, cs + b * H, hs + b * H, tmp, H);
      if (io->Y != NULL) memcpy(io->Y + ((t * D + d) * B + b) * H, hs + b * H, H * sizeof(float));
    }
  }
  for (size_t b = 0; b < B; b++) {
    if (io->Yh != NULL) memcpy(io->Yh + (d * B + b) * H, hs + b * H, H * sizeof(float));
    if (io->Yc != NULL) memcpy(io->Yc + (d * B + b) * H, cs + b * H, H * sizeof(float));
  }
}

static void dq_run(const void *params, const void *geom, const op_tensor *in, op_tensor *out, void *workspace,
                   const op_exec_ctx *ctx) {
  const rnn_params *p = params;
  const rnn_geom *gm = geom;
  const size_t S = gm->seq, B = gm->batch, I = gm->input, H = gm->hidden, D = (size_t)p->dirs;
  dq_job jb = {.p = p, .gm = gm, .ws = workspace};
  rnn_io_get(p, gm, in, out, &jb.io);
  uint8_t *xq = (uint8_t *)(jb.ws + D * dq_dir_floats(gm));
  for (size_t b = 0; b < B; b++) {
    const size_t l = rnn_seq_len(jb.io.lens, b, S);
    if (l > jb.max_len) jb.max_len = l;
  }
  if (jb.io.Y != NULL) memset(jb.io.Y, 0, S * D * B * H * sizeof(float));
  dq_block(p, jb.io.X, jb.max_len * B * I, xq, &jb.xs, &jb.xzp);
  jb.xq = xq;
  /* a direction's multiply-adds: x * W over every row, h * R per step (rows * 4H fits: xw) */
  size_t cost;
  if (!q8rt_mul_size(jb.max_len * B * 4 * H, I + H, &cost)) cost = SIZE_MAX;
  if (D == 1) {
    /* one recurrence: the pool shares its GEMMs' columns instead */
    jb.ctx = ctx;
    dq_dir_item(&jb, 0);
    return;
  }
  op_parallel_items(ctx, D, cost, 1 << 18, dq_dir_item, &jb);
}

const op_def q8rt_op_lstm = {.op_type = "LSTM",
                             .domain = "",
                             .min_opset = 7,
                             .prepare = lstm_prepare,
                             .infer = rnn_infer,
                             .workspace = rnn_workspace,
                             .run = rnn_run};

const op_def q8rt_op_gru = {.op_type = "GRU",
                            .domain = "",
                            .min_opset = 7,
                            .prepare = gru_prepare,
                            .infer = rnn_infer,
                            .workspace = rnn_workspace,
                            .run = rnn_run};

const op_def q8rt_op_rnn = {.op_type = "RNN",
                            .domain = "",
                            .min_opset = 7,
                            .prepare = simple_rnn_prepare,
                            .infer = rnn_infer,
                            .workspace = rnn_workspace,
                            .run = rnn_run};

static q8rt_status dqlstm_prepare(op_prepare_ctx *ctx, void **out, q8rt_error *err) {
  return rnn_prepare(ctx, out, err, RNN_LSTM);
}

const op_def q8rt_op_dynamic_quantize_lstm = {.op_type = "DynamicQuantizeLSTM",
                                              .domain = "com.microsoft",
                                              .min_opset = 1,
                                              .prepare = dqlstm_prepare,
                                              .infer = rnn_infer,
                                              .workspace = rnn_workspace,
                                              .run = dq_run};
