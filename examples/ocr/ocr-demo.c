/* ocr-demo: PP-OCR text detection, direction classification and recognition through q8rt.
 *
 *   ocr-demo DET.onnx CLS.onnx REC.onnx IN.png OUT.png [--threads N] [--repeat N] [--json FILE]
 *
 * Prints each recognized line (confidence, text) in reading order and the latency per stage (the
 * median over --repeat runs of the whole pipeline, after one warm-up run); writes OUT.png (the
 * image with the boxes, beside the recognized text drawn in them) and, with --json, the lines and
 * times as JSON. The character list comes from the recognizer's metadata ("character"), read with
 * q8rt_model_metadata. The pipeline itself is ocr.c. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "font8x16.h"
#include "ocr.h"
#include "q8rt.h"

static const char *const stage_names[OCR_STAGES] = {"det", "cls", "rec"};

typedef struct engine {
  q8rt_model *model[OCR_STAGES];
  q8rt_session *session[OCR_STAGES];
} engine;

static int q8rt_infer(void *ctx, int stage, const float *in, const int64_t *in_shape, const float **out,
                      int64_t *out_shape, int *out_rank, char *err, size_t err_size) {
  engine *e = ctx;
  q8rt_error qe;
  size_t nbytes = sizeof(float) * (size_t)(in_shape[0] * in_shape[1] * in_shape[2] * in_shape[3]);
  q8rt_tensor_info info;
  const void *data;
  size_t out_bytes;
  if (q8rt_session_set_input(e->session[stage], 0, in_shape, 4, in, nbytes, &qe) != Q8RT_OK ||
      q8rt_session_run(e->session[stage], &qe) != Q8RT_OK ||
      q8rt_session_get_output(e->session[stage], 0, &info, &data, &out_bytes, &qe) != Q8RT_OK) {
    snprintf(err, err_size, "%s: %s", stage_names[stage], qe.message);
    return -1;
  }
  if (info.dtype != Q8RT_DTYPE_FLOAT32) {
    snprintf(err, err_size, "%s: output is %s, not float32", stage_names[stage], q8rt_dtype_name(info.dtype));
    return -1;
  }
  *out = data;
  *out_rank = info.rank;
  for (int d = 0; d < info.rank; d++) out_shape[d] = info.shape[d];
  return 0;
}

/* ---- PNG and drawing ----------------------------------------------------------------------- */

typedef struct canvas {
  int w, h;
  uint8_t *rgb;
} canvas;

static int read_png(const char *path, canvas *img) {
  png_image p;
  memset(&p, 0, sizeof(p));
  p.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&p, path)) {
    fprintf(stderr, "ocr-demo: error: cannot read '%s': %s\n", path, p.message);
    return -1;
  }
  p.format = PNG_FORMAT_RGB;
  img->w = (int)p.width;
  img->h = (int)p.height;
  img->rgb = malloc(PNG_IMAGE_SIZE(p));
  if (img->rgb == NULL || !png_image_finish_read(&p, NULL, img->rgb, 0, NULL)) {
    fprintf(stderr, "ocr-demo: error: cannot decode '%s': %s\n", path, p.message);
    png_image_free(&p);
    return -1;
  }
  return 0;
}

static int write_png(const char *path, const canvas *img) {
  png_image p;
  memset(&p, 0, sizeof(p));
  p.version = PNG_IMAGE_VERSION;
  p.width = (png_uint_32)img->w;
  p.height = (png_uint_32)img->h;
  p.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&p, path, 0, img->rgb, 0, NULL)) {
    fprintf(stderr, "ocr-demo: error: cannot write '%s': %s\n", path, p.message);
    return -1;
  }
  return 0;
}

static void put(canvas *c, int x, int y, const uint8_t color[3]) {
  if (x >= 0 && y >= 0 && x < c->w && y < c->h) memcpy(c->rgb + ((size_t)y * c->w + x) * 3, color, 3);
}

static void line(canvas *c, int x0, int y0, int x1, int y1, const uint8_t color[3]) {
  int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
  for (;;) {
    put(c, x0, y0, color);
    put(c, x0 + 1, y0, color);
    put(c, x0, y0 + 1, color);
    if (x0 == x1 && y0 == y1) break;
    int e2 = 2 * e;
    if (e2 >= dy) e += dy, x0 += sx;
    if (e2 <= dx) e += dx, y0 += sy;
  }
}

static void polygon(canvas *c, const float xy[8], int dx, const uint8_t color[3]) {
  for (int k = 0; k < 4; k++) {
    int j = (k + 1) % 4;
    line(c, (int)xy[2 * k] + dx, (int)xy[2 * k + 1], (int)xy[2 * j] + dx, (int)xy[2 * j + 1], color);
  }
}

/* The text in the 8x16 font scaled to the box's height (non-ASCII characters as '?'). */
static void text(canvas *c, const char *s, int x, int y, int height, const uint8_t color[3]) {
  int scale = height / 16 > 1 ? height / 16 : 1;
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch & 0xc0) == 0x80) continue; /* UTF-8 continuation byte */
    const uint8_t *g = font8x16[(ch >= 32 && ch < 127 ? ch : '?') - 32];
    for (int r = 0; r < 16 * scale; r++)
      for (int q = 0; q < 8 * scale; q++)
        if (g[r / scale] >> (7 - q / scale) & 1) put(c, x + q, y + r, color);
    x += 8 * scale;
  }
}

/* ---- main ---------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr,
            "usage: ocr-demo DET.onnx CLS.onnx REC.onnx IN.png OUT.png [--threads N] [--repeat N] [--json FILE]\n");
    return 2;
  }
  int threads = 1, repeat = 1;
  const char *json = NULL;
  for (int i = 6; i < argc; i++) {
    if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
      threads = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--repeat") == 0)
      repeat = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--json") == 0)
      json = argv[++i];
    else {
      fprintf(stderr, "ocr-demo: error: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  if (repeat < 1) repeat = 1;
  int rc = 1;
  engine e;
  memset(&e, 0, sizeof(e));
  canvas img = {0, 0, NULL}, out = {0, 0, NULL};
  ocr_pipeline *pipe = NULL;
  double *t = calloc((size_t)repeat * OCR_STAGES * 2, sizeof(double));
  q8rt_error qe;
  char err[640];
  if (t == NULL || read_png(argv[4], &img) != 0) goto done;
  for (int s = 0; s < OCR_STAGES; s++) {
    q8rt_session_options so;
    q8rt_session_options_init(&so);
    so.threads = threads;
    if (q8rt_model_load_file(argv[1 + s], NULL, &e.model[s], &qe) != Q8RT_OK ||
        q8rt_session_create(e.model[s], &so, &e.session[s], &qe) != Q8RT_OK) {
      fprintf(stderr, "ocr-demo: error: %s: %s\n", argv[1 + s], qe.message);
      goto done;
    }
  }
  size_t clen = 0;
  const char *chars = q8rt_model_metadata(e.model[OCR_REC], "character", &clen);
  if (chars == NULL) {
    fprintf(stderr, "ocr-demo: error: %s has no 'character' metadata (the recognizer's character list)\n", argv[3]);
    goto done;
  }
  pipe = ocr_pipeline_create(q8rt_infer, &e, chars, clen, NULL, err, sizeof(err));
  if (pipe == NULL) {
    fprintf(stderr, "ocr-demo: error: %s\n", err);
    goto done;
  }
  for (int r = -1; r < repeat; r++) { /* one warm-up run */
    if (ocr_pipeline_run(pipe, img.rgb, img.w, img.h, err, sizeof(err)) != 0) {
      fprintf(stderr, "ocr-demo: error: %s\n", err);
      goto done;
    }
    for (int s = 0; r >= 0 && s < OCR_STAGES; s++) {
      int calls;
      ocr_stage_time(pipe, s, &calls, &t[(s * 2) * repeat + r], &t[(s * 2 + 1) * repeat + r]);
    }
  }
  int dw, dh, n = ocr_line_count(pipe);
  ocr_det_size(pipe, &dw, &dh);
  printf("ocr-demo: %s (%dx%d, detector input %dx%d): %d lines\n", argv[4], img.w, img.h, dw, dh, n);
  for (int i = 0; i < n; i++) {
    printf("%3d  %.3f  %s%s\n", i + 1, (double)ocr_line_score(pipe, i), ocr_line_text(pipe, i),
           ocr_line_flipped(pipe, i) ? "   (turned 180)" : "");
  }
  double med[OCR_STAGES][2];
  int calls[OCR_STAGES];
  for (int s = 0; s < OCR_STAGES; s++) {
    double ignore;
    ocr_stage_time(pipe, s, &calls[s], &ignore, &ignore);
    for (int k = 0; k < 2; k++) {
      qsort(&t[(s * 2 + k) * repeat], (size_t)repeat, sizeof(double), cmp_double);
      med[s][k] = t[(s * 2 + k) * repeat + repeat / 2];
    }
  }
  printf("q8rt %s, %d thread%s, median of %d run%s:\n", q8rt_version(), threads, threads == 1 ? "" : "s", repeat,
         repeat == 1 ? "" : "s");
  printf("  stage  calls  model_ms  stage_ms\n");
  for (int s = 0; s < OCR_STAGES; s++)
    printf("  %-5s  %5d  %8.2f  %8.2f\n", stage_names[s], calls[s], med[s][0], med[s][1]);

  /* left: the image with the boxes; right: the text in the boxes */
  out.w = img.w * 2;
  out.h = img.h;
  out.rgb = malloc((size_t)out.w * out.h * 3);
  if (out.rgb == NULL) goto done;
  for (int y = 0; y < img.h; y++) {
    memcpy(out.rgb + (size_t)y * out.w * 3, img.rgb + (size_t)y * img.w * 3, (size_t)img.w * 3);
    memset(out.rgb + ((size_t)y * out.w + img.w) * 3, 255, (size_t)img.w * 3);
  }
  static const uint8_t red[3] = {230, 30, 30}, blue[3] = {40, 60, 200}, black[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    float xy[8];
    ocr_line_box(pipe, i, xy);
    polygon(&out, xy, 0, red);
    polygon(&out, xy, img.w, blue);
    float top = xy[1] < xy[3] ? xy[1] : xy[3], bottom = xy[5] > xy[7] ? xy[5] : xy[7];
    text(&out, ocr_line_text(pipe, i), (int)xy[0] + img.w + 3, (int)top + 2, (int)(bottom - top) - 4, black);
  }
  if (write_png(argv[5], &out) != 0) goto done;
  printf("ocr-demo: boxes and text drawn into %s\n", argv[5]);

  if (json != NULL) {
    FILE *f = fopen(json, "w");
    if (f == NULL) {
      fprintf(stderr, "ocr-demo: error: cannot write '%s'\n", json);
      goto done;
    }
    fprintf(f, "{\"engine\": \"q8rt %s\", \"threads\": %d, \"runs\": %d, \"det_input\": [%d, %d],\n \"lines\": [",
            q8rt_version(), threads, repeat, dw, dh);
    for (int i = 0; i < n; i++) {
      float xy[8];
      ocr_line_box(pipe, i, xy);
      fprintf(f, "%s\n  {\"text\": ", i ? "," : "");
      json_string(f, ocr_line_text(pipe, i));
      fprintf(f, ", \"score\": %.6f, \"flipped\": %d, \"box\": [%g, %g, %g, %g, %g, %g, %g, %g]}",
              (double)ocr_line_score(pipe, i), ocr_line_flipped(pipe, i), (double)xy[0], (double)xy[1], (double)xy[2],
              (double)xy[3], (double)xy[4], (double)xy[5], (double)xy[6], (double)xy[7]);
    }
    fprintf(f, "],\n \"stages\": {");
    for (int s = 0; s < OCR_STAGES; s++) {
      fprintf(f, "%s\"%s\": {\"calls\": %d, \"model_ms\": %.4f, \"stage_ms\": %.4f}", s ? ", " : "", stage_names[s],
              calls[s], med[s][0], med[s][1]);
    }
    fprintf(f, "}}\n");
    if (fclose(f) != 0) goto done;
  }
  rc = 0;
done:
  ocr_pipeline_free(pipe);
  for (int s = 0; s < OCR_STAGES; s++) {
    q8rt_session_free(e.session[s]);
    q8rt_model_free(e.model[s]);
  }
  free(img.rgb);
  free(out.rgb);
  free(t);
  return rc;
}
