/* ocr-det-demo: run a quantized PP-OCR text detector through q8rt on a PNG and draw the text
 * regions it finds.
 *
 *   ocr-det-demo MODEL.onnx IN.png OUT.png [--threads N] [--repeat N]
 *
 * Preprocessing follows rapidocr's DetPreProcess: resize (bilinear) so the longer side is at most
 * 960 and both sides are multiples of 32, BGR order, (x/255 - 0.5)/0.5, NCHW. Postprocessing is
 * a simplified DBNet one: threshold the probability map at 0.3, take 4-connected components,
 * keep those of at least 16 pixels, and draw their bounding boxes (scaled back to the image) in
 * red. Prints the boxes and q8rt's median latency. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "q8rt.h"

typedef struct image {
  int w, h;
  uint8_t *rgb; /* h * w * 3 */
} image;

static int read_png(const char *path, image *img) {
  png_image p;
  memset(&p, 0, sizeof(p));
  p.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&p, path)) {
    fprintf(stderr, "ocr-det-demo: error: cannot read '%s': %s\n", path, p.message);
    return -1;
  }
  p.format = PNG_FORMAT_RGB;
  img->w = (int)p.width;
  img->h = (int)p.height;
  img->rgb = malloc(PNG_IMAGE_SIZE(p));
  if (img->rgb == NULL || !png_image_finish_read(&p, NULL, img->rgb, 0, NULL)) {
    fprintf(stderr, "ocr-det-demo: error: cannot decode '%s': %s\n", path, p.message);
    png_image_free(&p);
    return -1;
  }
  return 0;
}

static int write_png(const char *path, const image *img) {
  png_image p;
  memset(&p, 0, sizeof(p));
  p.version = PNG_IMAGE_VERSION;
  p.width = (png_uint_32)img->w;
  p.height = (png_uint_32)img->h;
  p.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&p, path, 0, img->rgb, 0, NULL)) {
    fprintf(stderr, "ocr-det-demo: error: cannot write '%s': %s\n", path, p.message);
    return -1;
  }
  return 0;
}

/* Bilinear resize + normalization into a 1x3xHxW float tensor, channels in BGR order. */
static void preprocess(const image *img, int h, int w, float *out) {
  const float sy = (float)img->h / (float)h, sx = (float)img->w / (float)w;
  for (int y = 0; y < h; y++) {
    float fy = ((float)y + 0.5f) * sy - 0.5f;
    if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < img->h ? y0 + 1 : y0;
    float wy = fy - (float)y0;
    for (int x = 0; x < w; x++) {
      float fx = ((float)x + 0.5f) * sx - 0.5f;
      if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < img->w ? x0 + 1 : x0;
      float wx = fx - (float)x0;
      for (int c = 0; c < 3; c++) {
        const uint8_t *p = img->rgb;
        float v00 = p[(y0 * img->w + x0) * 3 + c], v01 = p[(y0 * img->w + x1) * 3 + c];
        float v10 = p[(y1 * img->w + x0) * 3 + c], v11 = p[(y1 * img->w + x1) * 3 + c];
        float v = (v00 * (1 - wx) + v01 * wx) * (1 - wy) + (v10 * (1 - wx) + v11 * wx) * wy;
        out[(size_t)(2 - c) * h * w + (size_t)y * w + x] = (v / 255.0f - 0.5f) / 0.5f; /* RGB -> BGR */
      }
    }
  }
}

static void draw_box(image *img, int x0, int y0, int x1, int y1) {
  for (int t = 0; t < 2; t++) {
    for (int x = x0; x <= x1; x++) {
      for (int k = 0; k < 2; k++) {
        int y = k ? y1 - t : y0 + t;
        if (x >= 0 && x < img->w && y >= 0 && y < img->h) {
          uint8_t *p = img->rgb + ((size_t)y * img->w + x) * 3;
          p[0] = 255, p[1] = 0, p[2] = 0;
        }
      }
    }
    for (int y = y0; y <= y1; y++) {
      for (int k = 0; k < 2; k++) {
        int x = k ? x1 - t : x0 + t;
        if (x >= 0 && x < img->w && y >= 0 && y < img->h) {
          uint8_t *p = img->rgb + ((size_t)y * img->w + x) * 3;
          p[0] = 255, p[1] = 0, p[2] = 0;
        }
      }
    }
  }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: ocr-det-demo MODEL.onnx IN.png OUT.png [--threads N] [--repeat N]\n");
    return 2;
  }
  int threads = 1, repeat = 10;
  for (int i = 4; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--threads") == 0)
      threads = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--repeat") == 0)
      repeat = atoi(argv[i + 1]);
  }
  if (repeat < 1) repeat = 1;
  int rc = 1;
  image img = {0, 0, NULL};
  float *input = NULL;
  uint8_t *mask = NULL;
  int *stack = NULL;
  double *times = NULL;
  q8rt_model *model = NULL;
  q8rt_session *session = NULL;
  q8rt_error err;
  if (read_png(argv[2], &img) != 0) goto done;

  /* both sides multiples of 32, the longer one at most 960 */
  double ratio = img.w > img.h ? (img.w > 960 ? 960.0 / img.w : 1.0) : (img.h > 960 ? 960.0 / img.h : 1.0);
  int h = (int)(img.h * ratio + 16) / 32 * 32, w = (int)(img.w * ratio + 16) / 32 * 32;
  if (h < 32) h = 32;
  if (w < 32) w = 32;
  input = malloc(sizeof(float) * 3 * (size_t)h * (size_t)w);
  times = malloc(sizeof(double) * (size_t)repeat);
  if (input == NULL || times == NULL) goto done;
  preprocess(&img, h, w, input);

  if (q8rt_model_load_file(argv[1], NULL, &model, &err) != Q8RT_OK) {
    fprintf(stderr, "ocr-det-demo: error: %s\n", err.message);
    goto done;
  }
  q8rt_session_options so;
  q8rt_session_options_init(&so);
  so.threads = threads;
  if (q8rt_session_create(model, &so, &session, &err) != Q8RT_OK) {
    fprintf(stderr, "ocr-det-demo: error: %s\n", err.message);
    goto done;
  }
  const int64_t shape[4] = {1, 3, h, w};
  if (q8rt_session_set_input(session, 0, shape, 4, input, sizeof(float) * 3 * (size_t)h * (size_t)w, &err) != Q8RT_OK) {
    fprintf(stderr, "ocr-det-demo: error: %s\n", err.message);
    goto done;
  }
  for (int r = -1; r < repeat; r++) { /* one warm-up run */
    double t0 = now_ms();
    if (q8rt_session_run(session, &err) != Q8RT_OK) {
      fprintf(stderr, "ocr-det-demo: error: %s\n", err.message);
      goto done;
    }
    if (r >= 0) times[r] = now_ms() - t0;
  }
  qsort(times, (size_t)repeat, sizeof(double), cmp_double);
  const void *out;
  size_t out_bytes;
  q8rt_tensor_info info;
  if (q8rt_session_get_output(session, 0, &info, &out, &out_bytes, &err) != Q8RT_OK) {
    fprintf(stderr, "ocr-det-demo: error: %s\n", err.message);
    goto done;
  }
  if (info.dtype != Q8RT_DTYPE_FLOAT32 || info.rank != 4 || info.shape[2] != h || info.shape[3] != w) {
    fprintf(stderr, "ocr-det-demo: error: unexpected output (expected float32 [1,1,%d,%d])\n", h, w);
    goto done;
  }
  const float *prob = out;
  mask = calloc((size_t)h * (size_t)w, 1);
  stack = malloc(sizeof(int) * (size_t)h * (size_t)w);
  if (mask == NULL || stack == NULL) goto done;
  for (int i = 0; i < h * w; i++) mask[i] = prob[i] > 0.3f;
  int boxes = 0;
  for (int start = 0; start < h * w; start++) {
    if (mask[start] != 1) continue;
    int sp = 0, n = 0, minx = w, miny = h, maxx = -1, maxy = -1;
    stack[sp++] = start;
    mask[start] = 2;
    while (sp > 0) {
      int p = stack[--sp], y = p / w, x = p % w;
      n++;
      if (x < minx) minx = x;
      if (x > maxx) maxx = x;
      if (y < miny) miny = y;
      if (y > maxy) maxy = y;
      const int nb[4] = {x > 0 ? p - 1 : -1, x + 1 < w ? p + 1 : -1, y > 0 ? p - w : -1, y + 1 < h ? p + w : -1};
      for (int k = 0; k < 4; k++) {
        if (nb[k] >= 0 && mask[nb[k]] == 1) {
          mask[nb[k]] = 2;
          stack[sp++] = nb[k];
        }
      }
    }
    if (n < 16) continue;
    /* DBNet shrinks text regions; grow the box back a little, then map to image pixels */
    const int grow = 2 + (maxy - miny) / 3;
    int x0 = (int)((minx - grow) * (double)img.w / w), x1 = (int)((maxx + grow) * (double)img.w / w);
    int y0 = (int)((miny - grow) * (double)img.h / h), y1 = (int)((maxy + grow) * (double)img.h / h);
    draw_box(&img, x0, y0, x1, y1);
    printf("box %d: x %d..%d y %d..%d (%d pixels in the map)\n", boxes, x0, x1, y0, y1, n);
    boxes++;
  }
  if (write_png(argv[3], &img) != 0) goto done;
  printf("ocr-det-demo: %d text regions drawn into %s\n", boxes, argv[3]);
  printf("latency_ms median=%.3f min=%.3f runs=%d (q8rt, %d thread%s, input %dx%d)\n", times[repeat / 2], times[0],
         repeat, threads, threads == 1 ? "" : "s", w, h);
  rc = 0;
done:
  q8rt_session_free(session);
  q8rt_model_free(model);
  free(img.rgb);
  free(input);
  free(mask);
  free(stack);
  free(times);
  return rc;
}
