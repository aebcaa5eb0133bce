/* Model loading: bytes -> loader -> IR -> plan, and the model's public accessors. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "isa.h"
#include "q8rt-isa.h"
#include "passes/passes.h"
#include "loader/loader.h"

#define DEFAULT_MAX_MODEL_BYTES ((size_t)1 << 30)

void q8rt_model_options_init(q8rt_model_options *o) {
  if (o == NULL) return;
  memset(o, 0, sizeof(*o));
  o->size = sizeof(*o);
  o->backend = Q8RT_BACKEND_AUTO;
  o->max_model_bytes = DEFAULT_MAX_MODEL_BYTES;
}

/* Copy the caller's options (which may be an older, smaller struct) over the defaults. */
static q8rt_status resolve_options(const q8rt_model_options *in, q8rt_model_options *out, q8rt_error *err) {
  q8rt_model_options_init(out);
  if (in == NULL) return Q8RT_OK;
  if (in->size < offsetof(q8rt_model_options, allocator) + sizeof(void *) || in->size > sizeof(*out)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT,
                     "q8rt_model_options.size is %zu: set it to sizeof(q8rt_model_options) (%zu)", in->size,
                     sizeof(*out));
  }
  memcpy(out, in, in->size);
  out->size = sizeof(*out);
  if (out->max_model_bytes == 0) out->max_model_bytes = DEFAULT_MAX_MODEL_BYTES;
  if ((unsigned)out->backend > Q8RT_BACKEND_AVX512) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "unknown backend %d", (int)out->backend);
  }
  if (out->allocator != NULL && (out->allocator->alloc == NULL || out->allocator->free == NULL)) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_ARGUMENT, "the allocator needs both alloc and free");
  }
  return Q8RT_OK;
}

static size_t append(char **buf, size_t *len, size_t *cap, q8rt_pool *pool, const char *s) {
  size_t n = strlen(s);
  if (*len + n + 1 > *cap) {
    size_t ncap = (*cap ? *cap * 2 : 1024);
    while (ncap < *len + n + 1) ncap *= 2;
    char *nb = q8rt_pool_alloc(pool, ncap, 1);
    if (nb == NULL) return 0;
    if (*len) memcpy(nb, *buf, *len);
    *buf = nb;
    *cap = ncap;
  }
  memcpy(*buf + *len, s, n + 1);
  *len += n;
  return n;
}

static q8rt_status build_explain(q8rt_model *m, q8rt_error *err) {
  char *buf = NULL;
  size_t len = 0, cap = 0;
  char line[4096];
  for (int i = 0; i < m->plan.n_steps; i++) {
    const plan_step *s = &m->plan.steps[i];
    char branch[320] = "";
    if (s->guard > 0) {
      const plan_guard *gd = &m->plan.guards[s->guard - 1];
      snprintf(branch, sizeof(branch), " [%s of If '%.200s']", gd->side ? "then_branch" : "else_branch", gd->if_name);
    }
    snprintf(line, sizeof(line), "%3d %-18s %-24s %s: %s%s%s%s\n", i, s->node->op_type, s->node->name, s->kernel,
             s->reason, s->node->note ? "; " : "", s->node->note ? s->node->note : "", branch);
    if (append(&buf, &len, &cap, &m->pool, line) == 0) {
      return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    /* a Loop or Scan: its body's plan, each line under it ("    | "; nested bodies already are in it) */
    const q8rt_model *sub = m->plan.submodels;
    const int has_body = strcmp(s->node->op_type, "Loop") == 0 || strcmp(s->node->op_type, "Scan") == 0;
    while (sub != NULL && (!has_body || strcmp(sub->name, s->node->name) != 0)) {
      sub = sub->next_sub;
    }
    for (const char *p = sub != NULL ? sub->explain : NULL; p != NULL && *p != '\0';) {
      const char *nl = strchr(p, '\n');
      const size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
      snprintf(line, sizeof(line), "    | %.*s\n", (int)(n < sizeof(line) - 8 ? n : sizeof(line) - 8), p);
      if (append(&buf, &len, &cap, &m->pool, line) == 0) {
        return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
      }
      p += n + (nl != NULL);
    }
  }
  if (buf == NULL) buf = q8rt_pool_strdup(&m->pool, "");
  if (buf == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  m->explain = buf;
  m->explain_len = len;
  return Q8RT_OK;
}

static q8rt_status copy_metadata(q8rt_model *m, const ir_graph *g, q8rt_error *err) {
  m->n_metadata = g->n_metadata;
  m->metadata = q8rt_pool_array(&m->pool, g->n_metadata + 1, sizeof(ir_metadata));
  if (m->metadata == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < g->n_metadata; i++) {
    const ir_metadata *e = &g->metadata[i];
    ir_metadata *c = &m->metadata[i];
    c->key = q8rt_pool_strdup(&m->pool, e->key);
    c->value = q8rt_pool_strndup(&m->pool, e->value, e->value_len); /* may hold NULs: copied by length */
    c->value_len = e->value_len;
    if (c->key == NULL || c->value == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  return Q8RT_OK;
}

/* `held` bytes (the caller's copy of the file) count against the limit while loading. */
static q8rt_status load(const void *data, size_t size, size_t held, const q8rt_model_options *opts,
                        const char *external_dir, q8rt_model **model, q8rt_error *err) {
  const q8rt_allocator *a = opts->allocator != NULL ? opts->allocator : q8rt_default_allocator();
  if (size > opts->max_model_bytes) {
    return q8rt_fail(err, Q8RT_ERROR_INVALID_MODEL, "the model is %zu bytes, more than the limit of %zu", size,
                     opts->max_model_bytes);
  }
  q8rt_model *m = q8rt_calloc(a, 1, sizeof(*m));
  if (m == NULL) return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  q8rt_meter_init(&m->meter, a, opts->max_memory_bytes);
  m->allocator = &m->meter.iface;
  if (!q8rt_meter_charge(&m->meter, sizeof(*m)) || !q8rt_meter_charge(&m->meter, held)) {
    const size_t limit = opts->max_memory_bytes;
    q8rt_free(a, m, sizeof(*m));
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY,
                     "the model exceeds its memory limit of %zu bytes before decoding (%zu bytes of model data)", limit,
                     held);
  }
  q8rt_pool_init(&m->pool, m->allocator);
  q8rt_pool_init(&m->tensors, m->allocator);
  m->backend = opts->backend;

  q8rt_load_config cfg;
  cfg.allocator = m->allocator;
  cfg.max_unpack_bytes = opts->max_unpack_bytes;
  if (cfg.max_unpack_bytes == 0) cfg.max_unpack_bytes = q8rt_default_unpack_budget(size);
  cfg.external_data_dir = external_dir;
  q8rt_status st = q8rt_load_graph(data, size, &cfg, &m->graph, err);
  if (st == Q8RT_OK) {
    const ir_graph *g = m->graph;
    m->all_inputs_static = 1;
    for (int i = 0; i < g->n_inputs && st == Q8RT_OK; i++) {
      const ir_value *v = &g->values[g->inputs[i]];
      if (q8rt_dtype_size(v->dtype) == 0) {
        st = q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "graph input '%s' has type %s, which q8rt does not support",
                       v->name, q8rt_onnx_type_name(v->dtype));
      }
      if (v->rank < 0) m->all_inputs_static = 0;
      for (int d = 0; d < v->rank; d++) {
        if (v->dims[d] < 0) m->all_inputs_static = 0;
      }
    }
  }
  /* A forced avx2 backend is what an AVX2+FMA3+F16C machine without AVX-512 gets: every kernel
   * choice, including the helpers that pick from the ISA alone (layout transposes, packing), sees
   * only those flags. */
  m->isa = q8rt_cpu_isa();
  if (m->backend == Q8RT_BACKEND_AVX2) m->isa &= Q8RT_ISA_SCALAR | Q8RT_ISA_AVX2;
  pass_results passed;
  if (st == Q8RT_OK) st = pass_run(m->graph, &m->pool, m->backend, m->isa, &passed, err);
  if (st == Q8RT_OK) st = plan_build(m->graph, &passed, &m->pool, m->backend, m->isa, !opts->no_tables, &m->plan, err);
  if (st == Q8RT_OK) {
    const ir_graph *g = m->graph;
    for (int i = 0; i < g->n_outputs && st == Q8RT_OK; i++) {
      const ir_value *v = &g->values[g->outputs[i]];
      if (q8rt_dtype_size(v->constant ? v->constant->dtype : v->dtype) == 0) {
        st = q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "graph output '%s' has type %s, which q8rt does not support",
                       v->name, q8rt_onnx_type_name(v->dtype));
      }
    }
  }
  if (st == Q8RT_OK) st = build_explain(m, err);
  if (st == Q8RT_OK) st = copy_metadata(m, m->graph, err);
  if (st == Q8RT_OK) {
    /* The plan holds all it needs (plan_value, op_node, params); the constants its steps read
     * stay, owned by the model, and the rest of the IR goes. */
    ir_graph_take_tensors(m->graph, &m->tensors);
    ir_graph_free(m->graph);
    m->graph = NULL;
  }
  q8rt_meter_release(&m->meter, held);
  if (st != Q8RT_OK) {
    st = q8rt_meter_failure(&m->meter, st, "the model", err);
    q8rt_model_free(m);
    return st;
  }
  *model = m;
  return Q8RT_OK;
}

q8rt_status q8rt_model_load_memory(const void *data, size_t size, const q8rt_model_options *options, q8rt_model **model,
                                   q8rt_error *error) {
  if (model == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "model output pointer is NULL");
  *model = NULL;
  if (data == NULL && size != 0) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "model data is NULL");
  q8rt_model_options o;
  q8rt_status st = resolve_options(options, &o, error);
  if (st != Q8RT_OK) return st;
  return load(data, size, 0, &o, o.external_data_dir, model, error);
}

q8rt_status q8rt_model_load_file(const char *path, const q8rt_model_options *options, q8rt_model **model,
                                 q8rt_error *error) {
  if (model == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "model output pointer is NULL");
  *model = NULL;
  if (path == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "model path is NULL");
  q8rt_model_options o;
  q8rt_status st = resolve_options(options, &o, error);
  if (st != Q8RT_OK) return st;
  const q8rt_allocator *a = o.allocator != NULL ? o.allocator : q8rt_default_allocator();

  FILE *f = fopen(path, "rb");
  if (f == NULL) return q8rt_fail(error, Q8RT_ERROR_IO, "cannot open model '%s': %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    return q8rt_fail(error, Q8RT_ERROR_IO, "model '%s' is not a regular file", path);
  }
  if ((uint64_t)sb.st_size > (uint64_t)o.max_model_bytes) {
    fclose(f);
    return q8rt_fail(error, Q8RT_ERROR_INVALID_MODEL, "model '%s' is %lld bytes, more than the limit of %zu", path,
                     (long long)sb.st_size, o.max_model_bytes);
  }
  size_t size = (size_t)sb.st_size;
  if (o.max_memory_bytes != 0 && size > o.max_memory_bytes) {
    fclose(f);
    return q8rt_fail(error, Q8RT_ERROR_OUT_OF_MEMORY, "model '%s' is %zu bytes, more than its memory limit of %zu",
                     path, size, o.max_memory_bytes);
  }
  void *buf = q8rt_alloc(a, size ? size : 1, 16);
  if (buf == NULL) {
    fclose(f);
    return q8rt_fail(error, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
  }
  size_t got = fread(buf, 1, size, f);
  fclose(f);
  if (got != size) {
    q8rt_free(a, buf, size ? size : 1);
    return q8rt_fail(error, Q8RT_ERROR_IO, "short read on model '%s'", path);
  }
  /* External data lives beside the model unless the caller names another folder. */
  char dir[4096];
  const char *ext = o.external_data_dir;
  if (ext == NULL) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
      snprintf(dir, sizeof(dir), ".");
    } else if (slash == path) {
      snprintf(dir, sizeof(dir), "/");
    } else {
      snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    }
    ext = dir;
  }
  st = load(buf, size, size, &o, ext, model, error);
  q8rt_free(a, buf, size ? size : 1);
  return st;
}

q8rt_status q8rt_model_from_graph(ir_graph *g, const q8rt_allocator *allocator, q8rt_backend backend, uint32_t isa,
                                  int tables, q8rt_model **out, q8rt_error *err) {
  *out = NULL;
  q8rt_model *m = q8rt_calloc(allocator, 1, sizeof(*m));
  if (m == NULL) {
    ir_graph_free(g);
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  q8rt_meter_init(&m->meter, allocator, 0);
  m->allocator = &m->meter.iface;
  q8rt_pool_init(&m->pool, m->allocator);
  q8rt_pool_init(&m->tensors, m->allocator);
  m->backend = backend;
  m->isa = isa;
  m->is_body = 1;
  m->name = q8rt_pool_strdup(&m->pool, g->name);
  if (m->name == NULL) {
    q8rt_model_free(m);
    ir_graph_free(g);
    return q8rt_fail(err, Q8RT_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  m->graph = g; /* allocated from `allocator`, freed through it (ir_graph keeps its allocator) */
  q8rt_status st = Q8RT_OK;
  m->all_inputs_static = 1;
  for (int i = 0; i < g->n_inputs && st == Q8RT_OK; i++) {
    const ir_value *v = &g->values[g->inputs[i]];
    if (q8rt_dtype_size(v->dtype) == 0) {
      st = q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "body graph '%s' input '%s' has type %s, which q8rt does not support",
                     g->name, v->name, q8rt_onnx_type_name(v->dtype));
    }
    if (v->rank < 0) m->all_inputs_static = 0;
    for (int d = 0; d < v->rank; d++) {
      if (v->dims[d] < 0) m->all_inputs_static = 0;
    }
  }
  pass_results passed;
  if (st == Q8RT_OK) st = pass_run(m->graph, &m->pool, m->backend, m->isa, &passed, err);
  if (st == Q8RT_OK) st = plan_build(m->graph, &passed, &m->pool, m->backend, m->isa, tables, &m->plan, err);
  for (int i = 0; st == Q8RT_OK && i < g->n_outputs; i++) {
    const ir_value *v = &g->values[g->outputs[i]];
    if (q8rt_dtype_size(v->constant ? v->constant->dtype : v->dtype) == 0) {
      st =
          q8rt_fail(err, Q8RT_ERROR_UNSUPPORTED, "body graph '%s' output '%s' has type %s, which q8rt does not support",
                    g->name, v->name, q8rt_onnx_type_name(v->dtype));
    }
  }
  if (st == Q8RT_OK) st = build_explain(m, err);
  if (st == Q8RT_OK) {
    ir_graph_take_tensors(m->graph, &m->tensors);
    ir_graph_free(m->graph);
    m->graph = NULL;
  }
  if (st != Q8RT_OK) {
    q8rt_model_free(m);
    return st;
  }
  *out = m;
  return Q8RT_OK;
}

void q8rt_model_free(q8rt_model *m) {
  if (m == NULL) return;
  while (m->plan.submodels != NULL) {
    q8rt_model *sub = m->plan.submodels;
    m->plan.submodels = sub->next_sub;
    q8rt_model_free(sub);
  }
  const q8rt_allocator a = m->meter.under;
  ir_graph_free(m->graph);
  q8rt_pool_free(&m->tensors);
  q8rt_pool_free(&m->pool);
  q8rt_free(&a, m, sizeof(*m));
}

size_t q8rt_model_memory(const q8rt_model *m) { return m != NULL ? atomic_load(&m->meter.used) : 0; }

size_t q8rt_model_input_count(const q8rt_model *m) { return m ? (size_t)m->plan.n_inputs : 0; }
size_t q8rt_model_output_count(const q8rt_model *m) { return m ? (size_t)m->plan.n_outputs : 0; }

static void fill_info(const plan_value *v, q8rt_tensor_info *info) {
  memset(info, 0, sizeof(*info));
  const op_shape *s = &v->shape;
  info->name = v->name;
  info->dtype = s->dtype;
  info->rank = s->rank < 0 ? 0 : s->rank;
  for (int i = 0; i < info->rank; i++) info->shape[i] = s->dims[i];
  info->has_quantization = v->has_quant;
  info->scale = v->scale;
  info->zero_point = v->zero_point;
}

q8rt_status q8rt_model_input_info(const q8rt_model *m, size_t index, q8rt_tensor_info *info, q8rt_error *error) {
  if (m == NULL || info == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "model or info is NULL");
  if (index >= (size_t)m->plan.n_inputs) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "input index %zu out of range (the model has %d inputs)",
                     index, m->plan.n_inputs);
  }
  fill_info(&m->plan.values[m->plan.inputs[index]], info);
  return Q8RT_OK;
}

q8rt_status q8rt_model_output_info(const q8rt_model *m, size_t index, q8rt_tensor_info *info, q8rt_error *error) {
  if (m == NULL || info == NULL) return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "model or info is NULL");
  if (index >= (size_t)m->plan.n_outputs) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "output index %zu out of range (the model has %d outputs)",
                     index, m->plan.n_outputs);
  }
  fill_info(&m->plan.values[m->plan.outputs[index]], info);
  return Q8RT_OK;
}

int q8rt_model_find_input(const q8rt_model *m, const char *name) {
  if (m == NULL || name == NULL) return -1;
  for (int i = 0; i < m->plan.n_inputs; i++) {
    if (strcmp(m->plan.values[m->plan.inputs[i]].name, name) == 0) return i;
  }
  return -1;
}

int q8rt_model_find_output(const q8rt_model *m, const char *name) {
  if (m == NULL || name == NULL) return -1;
  for (int i = 0; i < m->plan.n_outputs; i++) {
    if (strcmp(m->plan.values[m->plan.outputs[i]].name, name) == 0) return i;
  }
  return -1;
}

size_t q8rt_model_metadata_count(const q8rt_model *m) { return m != NULL ? m->n_metadata : 0; }

q8rt_status q8rt_model_metadata_entry(const q8rt_model *m, size_t index, const char **key, const char **value,
                                      size_t *value_len, q8rt_error *error) {
  if (m == NULL || key == NULL || value == NULL) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT,
                     "q8rt_model_metadata_entry: model, key and value must not be NULL");
  }
  if (index >= m->n_metadata) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "metadata index %zu out of range (the model has %zu entries)",
                     index, m->n_metadata);
  }
  const ir_metadata *e = &m->metadata[index];
  *key = e->key;
  *value = e->value;
  if (value_len != NULL) *value_len = e->value_len;
  return Q8RT_OK;
}

const char *q8rt_model_metadata(const q8rt_model *m, const char *key, size_t *value_len) {
  if (m == NULL || key == NULL) return NULL;
  for (size_t i = m->n_metadata; i-- > 0;) {
    const ir_metadata *e = &m->metadata[i];
    if (strcmp(e->key, key) == 0) {
      if (value_len != NULL) *value_len = e->value_len;
      return e->value;
    }
  }
  return NULL;
}

size_t q8rt_model_explain(const q8rt_model *m, char *buf, size_t buf_size) {
  if (m == NULL) return 0;
  if (buf != NULL && buf_size > 0) {
    size_t n = m->explain_len < buf_size - 1 ? m->explain_len : buf_size - 1;
    memcpy(buf, m->explain, n);
    buf[n] = '\0';
  }
  return m->explain_len;
}

q8rt_status q8rt_tensor_proto_decode(const void *bytes, size_t size, q8rt_tensor_info *info, void *data,
                                     size_t data_capacity, size_t *nbytes, q8rt_error *error) {
  if (bytes == NULL || info == NULL || nbytes == NULL) {
    return q8rt_fail(error, Q8RT_ERROR_INVALID_ARGUMENT, "bytes, info and nbytes must not be NULL");
  }
  return q8rt_load_tensor_proto(bytes, size, q8rt_default_allocator(), info, data, data_capacity, nbytes, error);
}
