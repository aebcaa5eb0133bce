/* PP-OCR pipeline around an inference callback; see ocr.h for the steps and their parameters. */
#include "ocr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct ocr_line {
  float box[8];
  char *text;
  float score;
  int flipped;
} ocr_line;

typedef struct stage_time {
  int calls;
  double infer_ms, total_ms;
} stage_time;

struct ocr_pipeline {
  ocr_infer_fn infer;
  void *ctx;
  ocr_config cfg;
  char *chars;          /* the character list, each entry NUL-terminated */
  const char **classes; /* class index -> UTF-8 string: blank, the list, space */
  size_t n_classes;
  ocr_line *lines;
  int n_lines, cap_lines;
  stage_time times[OCR_STAGES];
  int det_w, det_h;
};

typedef struct image {
  int w, h;
  uint8_t *rgb;
} image;

typedef struct quad {
  float p[8]; /* x0 y0 x1 y1 x2 y2 x3 y3: top-left, top-right, bottom-right, bottom-left */
} quad;

static int fail(char *err, size_t n, const char *fmt, ...) {
  if (err != NULL && n > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void ocr_config_default(ocr_config *c) {
  c->det_limit_side = 960;
  c->det_thresh = 0.3f;
  c->box_thresh = 0.5f;
  c->unclip_ratio = 1.6f;
  c->max_candidates = 1000;
  c->use_cls = 1;
  c->cls_thresh = 0.9f;
  c->text_score = 0.5f;
}

ocr_pipeline *ocr_pipeline_create(ocr_infer_fn infer, void *ctx, const char *character, size_t character_len,
                                  const ocr_config *cfg, char *err, size_t err_size) {
  if (infer == NULL || character == NULL || character_len == 0) {
    fail(err, err_size, "ocr: an engine and a non-empty character list are needed");
    return NULL;
  }
  ocr_pipeline *p = calloc(1, sizeof(*p));
  if (p == NULL) return NULL;
  p->infer = infer;
  p->ctx = ctx;
  if (cfg != NULL)
    p->cfg = *cfg;
  else
    ocr_config_default(&p->cfg);
  /* One entry per line, as rapidocr's splitlines(); "\r\n" ends a line too. */
  p->chars = malloc(character_len + 1);
  size_t lines = 1;
  for (size_t i = 0; i < character_len; i++) lines += character[i] == '\n';
  p->classes = malloc(sizeof(char *) * (lines + 2));
  if (p->chars == NULL || p->classes == NULL) {
    ocr_pipeline_free(p);
    fail(err, err_size, "ocr: out of memory");
    return NULL;
  }
  memcpy(p->chars, character, character_len);
  p->chars[character_len] = '\0';
  p->classes[p->n_classes++] = ""; /* CTC blank */
  char *s = p->chars, *end = p->chars + character_len;
  while (s < end) {
    char *nl = memchr(s, '\n', (size_t)(end - s));
    char *e = nl != NULL ? nl : end;
    if (e > s && e[-1] == '\r') e[-1] = '\0';
    *e = '\0';
    p->classes[p->n_classes++] = s;
    s = e + 1;
  }
  p->classes[p->n_classes++] = " ";
  return p;
}

static void clear_lines(ocr_pipeline *p) {
  for (int i = 0; i < p->n_lines; i++) free(p->lines[i].text);
  p->n_lines = 0;
}

void ocr_pipeline_free(ocr_pipeline *p) {
  if (p == NULL) return;
  clear_lines(p);
  free(p->lines);
  free(p->chars);
  free(p->classes);
  free(p);
}

/* ---- image helpers ------------------------------------------------------------------------- */

/* cv2.resize INTER_LINEAR (half-pixel centres, edge clamped, result rounded to 8 bits) of the
 * RGB image, normalized as (v/255 - 0.5)/0.5 into columns [0, rw) of a 3 x rh x stride float
 * tensor in BGR channel order (the order the PaddleOCR models were trained on). */
static void resize_norm(const image *src, int rw, int rh, float *dst, int stride) {
  const float sy = (float)src->h / (float)rh, sx = (float)src->w / (float)rw;
  for (int y = 0; y < rh; y++) {
    float fy = ((float)y + 0.5f) * sy - 0.5f;
    if (fy < 0) fy = 0;
    int y0 = (int)fy, y1 = y0 + 1 < src->h ? y0 + 1 : y0;
    if (y0 >= src->h) y0 = y1 = src->h - 1;
    float wy = fy - (float)y0;
    for (int x = 0; x < rw; x++) {
      float fx = ((float)x + 0.5f) * sx - 0.5f;
      if (fx < 0) fx = 0;
      int x0 = (int)fx, x1 = x0 + 1 < src->w ? x0 + 1 : x0;
      if (x0 >= src->w) x0 = x1 = src->w - 1;
      float wx = fx - (float)x0;
      const uint8_t *r0 = src->rgb + (size_t)y0 * src->w * 3, *r1 = src->rgb + (size_t)y1 * src->w * 3;
      for (int c = 0; c < 3; c++) {
        float v = ((float)r0[x0 * 3 + c] * (1 - wx) + (float)r0[x1 * 3 + c] * wx) * (1 - wy) +
                  ((float)r1[x0 * 3 + c] * (1 - wx) + (float)r1[x1 * 3 + c] * wx) * wy;
        float q = floorf(v + 0.5f);
        dst[(size_t)(2 - c) * rh * stride + (size_t)y * stride + x] = (q / 255.0f - 0.5f) / 0.5f;
      }
    }
  }
}

/* Solve the 8x8 system that maps the destination rectangle's corners onto the quadrilateral:
 * src = (a x + b y + c, d x + e y + f) / (g x + h y + 1). Returns -1 when degenerate. */
static int homography(const float dst[8], const float src[8], double hm[9]) {
  double a[8][9];
  for (int i = 0; i < 4; i++) {
    double x = dst[2 * i], y = dst[2 * i + 1], u = src[2 * i], v = src[2 * i + 1];
    double r0[9] = {x, y, 1, 0, 0, 0, -x * u, -y * u, u};
    double r1[9] = {0, 0, 0, x, y, 1, -x * v, -y * v, v};
    memcpy(a[2 * i], r0, sizeof(r0));
    memcpy(a[2 * i + 1], r1, sizeof(r1));
  }
  for (int c = 0; c < 8; c++) {
    int piv = c;
    for (int r = c + 1; r < 8; r++)
      if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
    if (fabs(a[piv][c]) < 1e-12) return -1;
    if (piv != c) {
      double t[9];
      memcpy(t, a[c], sizeof(t));
      memcpy(a[c], a[piv], sizeof(t));
      memcpy(a[piv], t, sizeof(t));
    }
    for (int r = 0; r < 8; r++) {
      if (r == c) continue;
      double f = a[r][c] / a[c][c];
      for (int k = c; k < 9; k++) a[r][k] -= f * a[c][k];
    }
  }
  for (int i = 0; i < 8; i++) hm[i] = a[i][8] / a[i][i];
  hm[8] = 1;
  return 0;
}

/* get_rotate_crop_image: the quadrilateral warped upright (bilinear, replicated border). */
static int crop_quad(const image *img, const quad *q, image *out) {
  const float *p = q->p;
  float w1 = hypotf(p[0] - p[2], p[1] - p[3]), w2 = hypotf(p[4] - p[6], p[5] - p[7]);
  float h1 = hypotf(p[0] - p[6], p[1] - p[7]), h2 = hypotf(p[2] - p[4], p[3] - p[5]);
  int cw = (int)(w1 > w2 ? w1 : w2), ch = (int)(h1 > h2 ? h1 : h2);
  if (cw < 1 || ch < 1) return -1;
  const float dst[8] = {0, 0, (float)cw, 0, (float)cw, (float)ch, 0, (float)ch};
  double hm[9];
  if (homography(dst, p, hm) != 0) return -1;
  out->w = cw;
  out->h = ch;
  out->rgb = malloc((size_t)cw * ch * 3);
  if (out->rgb == NULL) return -1;
  for (int y = 0; y < ch; y++) {
    for (int x = 0; x < cw; x++) {
      double d = hm[6] * x + hm[7] * y + hm[8];
      double sx = (hm[0] * x + hm[1] * y + hm[2]) / d, sy = (hm[3] * x + hm[4] * y + hm[5]) / d;
      if (sx < 0) sx = 0;
      if (sy < 0) sy = 0;
      if (sx > img->w - 1) sx = img->w - 1;
      if (sy > img->h - 1) sy = img->h - 1;
      int x0 = (int)sx, y0 = (int)sy;
      int x1 = x0 + 1 < img->w ? x0 + 1 : x0, y1 = y0 + 1 < img->h ? y0 + 1 : y0;
      double fx = sx - x0, fy = sy - y0;
      for (int c = 0; c < 3; c++) {
        double v = (img->rgb[((size_t)y0 * img->w + x0) * 3 + c] * (1 - fx) +
                    img->rgb[((size_t)y0 * img->w + x1) * 3 + c] * fx) *
                       (1 - fy) +
                   (img->rgb[((size_t)y1 * img->w + x0) * 3 + c] * (1 - fx) +
                    img->rgb[((size_t)y1 * img->w + x1) * 3 + c] * fx) *
                       fy;
        out->rgb[((size_t)y * cw + x) * 3 + c] = (uint8_t)(v + 0.5);
      }
    }
  }
  return 0;
}

/* np.rot90 (counter-clockwise) when turn90, else a half turn; in place through a copy. */
static int rotate(image *img, int turn90) {
  uint8_t *o = malloc((size_t)img->w * img->h * 3);
  if (o == NULL) return -1;
  int w = img->w, h = img->h;
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < w; x++) {
      size_t from = ((size_t)y * w + x) * 3, to;
      if (turn90)
        to = ((size_t)(w - 1 - x) * h + y) * 3; /* new (row w-1-x, column y), rows of h pixels */
      else
        to = ((size_t)(h - 1 - y) * w + (w - 1 - x)) * 3;
      memcpy(o + to, img->rgb + from, 3);
    }
  }
  free(img->rgb);
  img->rgb = o;
  if (turn90) {
    img->w = h;
    img->h = w;
  }
  return 0;
}

/* ---- DB post-processing -------------------------------------------------------------------- */

typedef struct pt {
  double x, y;
} pt;

static double cross(pt o, pt a, pt b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

static int cmp_pt(const void *a, const void *b) {
  const pt *p = a, *q = b;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  return (p->y > q->y) - (p->y < q->y);
}

/* Andrew's monotone chain; hull (counter-clockwise, no collinear points) written over pts. */
static int convex_hull(pt *pts, int n, pt *hull) {
  qsort(pts, (size_t)n, sizeof(pt), cmp_pt);
  if (n < 3) {
    memcpy(hull, pts, sizeof(pt) * (size_t)n);
    return n;
  }
  int k = 0;
  for (int i = 0; i < n; i++) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) k--;
    hull[k++] = pts[i];
  }
  for (int i = n - 2, t = k + 1; i >= 0; i--) {
    while (k >= t && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) k--;
    hull[k++] = pts[i];
  }
  return k - 1;
}

/* Minimum-area rectangle of a convex polygon (rotating calipers over its edges): its 4 corners
 * and the shorter side. */
static double min_area_rect(const pt *hull, int n, pt corners[4]) {
  if (n == 1) {
    for (int i = 0; i < 4; i++) corners[i] = hull[0];
    return 0;
  }
  double best = INFINITY, sside = 0;
  for (int i = 0; i < n; i++) {
    pt a = hull[i], b = hull[(i + 1) % n];
    double ux = b.x - a.x, uy = b.y - a.y, len = hypot(ux, uy);
    if (len == 0) continue;
    ux /= len, uy /= len;
    double minu = INFINITY, maxu = -INFINITY, minv = INFINITY, maxv = -INFINITY;
    for (int j = 0; j < n; j++) {
      double u = hull[j].x * ux + hull[j].y * uy, v = -hull[j].x * uy + hull[j].y * ux;
      minu = fmin(minu, u), maxu = fmax(maxu, u), minv = fmin(minv, v), maxv = fmax(maxv, v);
    }
    double area = (maxu - minu) * (maxv - minv);
    if (area < best) {
      best = area;
      sside = fmin(maxu - minu, maxv - minv);
      const double us[4] = {minu, maxu, maxu, minu}, vs[4] = {minv, minv, maxv, maxv};
      for (int k = 0; k < 4; k++) {
        corners[k].x = us[k] * ux - vs[k] * uy;
        corners[k].y = us[k] * uy + vs[k] * ux;
      }
    }
  }
  return sside;
}

/* get_mini_boxes' corner order: of the two leftmost corners the upper is top-left, the other
 * bottom-left; of the two rightmost the upper is top-right. */
static void order_corners(const pt c[4], pt out[4]) {
  pt s[4];
  memcpy(s, c, sizeof(s));
  for (int i = 1; i < 4; i++) /* stable sort by x, as Python's sorted() */
    for (int j = i; j > 0 && s[j].x < s[j - 1].x; j--) {
      pt t = s[j];
      s[j] = s[j - 1];
      s[j - 1] = t;
    }
  int tl = s[1].y > s[0].y ? 0 : 1, bl = 1 - tl;
  int tr = s[3].y > s[2].y ? 2 : 3, br = 5 - tr;
  out[0] = s[tl], out[1] = s[tr], out[2] = s[br], out[3] = s[bl];
}

/* box_score_fast: mean probability over the pixels of the box's bounding rectangle that lie in
 * the box (corners truncated to integers, edges included, as cv2.fillPoly draws them). */
static float box_score(const float *prob, int w, int h, const pt c[4]) {
  double minx = c[0].x, maxx = c[0].x, miny = c[0].y, maxy = c[0].y;
  for (int i = 1; i < 4; i++) {
    minx = fmin(minx, c[i].x), maxx = fmax(maxx, c[i].x), miny = fmin(miny, c[i].y), maxy = fmax(maxy, c[i].y);
  }
  int x0 = (int)floor(minx), x1 = (int)ceil(maxx), y0 = (int)floor(miny), y1 = (int)ceil(maxy);
  x0 = x0 < 0 ? 0 : x0 > w - 1 ? w - 1 : x0;
  x1 = x1 < 0 ? 0 : x1 > w - 1 ? w - 1 : x1;
  y0 = y0 < 0 ? 0 : y0 > h - 1 ? h - 1 : y0;
  y1 = y1 < 0 ? 0 : y1 > h - 1 ? h - 1 : y1;
  pt q[4];
  for (int i = 0; i < 4; i++) q[i] = (pt){(double)(int)c[i].x, (double)(int)c[i].y};
  double sum = 0;
  long n = 0;
  for (int y = y0; y <= y1; y++) {
    for (int x = x0; x <= x1; x++) {
      pt p = {x, y};
      int pos = 0, neg = 0;
      for (int i = 0; i < 4; i++) {
        double cr = cross(q[i], q[(i + 1) % 4], p);
        pos += cr > 0, neg += cr < 0;
      }
      if (pos == 0 || neg == 0) {
        sum += prob[(size_t)y * w + x];
        n++;
      }
    }
  }
  return n > 0 ? (float)(sum / (double)n) : 0.0f;
}

typedef struct det_box {
  quad q;
} det_box;

static int cmp_box(const void *a, const void *b) {
  const det_box *p = a, *q = b;
  if (p->q.p[1] != q->q.p[1]) return p->q.p[1] < q->q.p[1] ? -1 : 1;
  return (p->q.p[0] > q->q.p[0]) - (p->q.p[0] < q->q.p[0]);
}

/* Boxes (in image pixels) from the probability map; *n_out boxes, sorted in reading order. */
static int db_boxes(const ocr_pipeline *P, const float *prob, int w, int h, int img_w, int img_h, det_box **out,
                    int *n_out) {
  const size_t npix = (size_t)w * h;
  uint8_t *mask = calloc(npix, 1);
  int *pix = malloc(sizeof(int) * npix);
  int *rmin = malloc(sizeof(int) * (size_t)h), *rmax = malloc(sizeof(int) * (size_t)h);
  /* two extreme pixels per row; the monotone chain writes up to twice its input */
  pt *pts = malloc(sizeof(pt) * 2 * (size_t)h), *hull = malloc(sizeof(pt) * (4 * (size_t)h + 2));
  int cap = 16, n = 0, rc = -1;
  det_box *boxes = malloc(sizeof(det_box) * (size_t)cap);
  if (mask == NULL || pix == NULL || rmin == NULL || rmax == NULL || pts == NULL || hull == NULL || boxes == NULL)
    goto done;
  /* threshold, then dilate with a 2x2 kernel (cv2.dilate's anchor: the pixel and its up/left) */
  for (int y = h - 1; y >= 0; y--) {
    for (int x = w - 1; x >= 0; x--) {
      int on = prob[(size_t)y * w + x] > P->cfg.det_thresh;
      if (x > 0) on |= prob[(size_t)y * w + x - 1] > P->cfg.det_thresh;
      if (y > 0) on |= prob[(size_t)(y - 1) * w + x] > P->cfg.det_thresh;
      if (x > 0 && y > 0) on |= prob[(size_t)(y - 1) * w + x - 1] > P->cfg.det_thresh;
      mask[(size_t)y * w + x] = (uint8_t)on;
    }
  }
  int candidates = 0;
  for (size_t start = 0; start < npix && candidates < P->cfg.max_candidates; start++) {
    if (mask[start] != 1) continue;
    candidates++;
    /* 8-connected region by flood fill; its convex hull comes from each row's end pixels */
    int sp = 0, ymin = h, ymax = -1;
    pix[sp++] = (int)start;
    mask[start] = 2;
    for (int y = 0; y < h; y++) rmin[y] = w, rmax[y] = -1;
    while (sp > 0) {
      int p = pix[--sp], y = p / w, x = p % w;
      if (x < rmin[y]) rmin[y] = x;
      if (x > rmax[y]) rmax[y] = x;
      if (y < ymin) ymin = y;
      if (y > ymax) ymax = y;
      for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
          int nx = x + dx, ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
          size_t q = (size_t)ny * w + nx;
          if (mask[q] == 1) {
            mask[q] = 2;
            pix[sp++] = (int)q;
          }
        }
      }
    }
    int np = 0;
    for (int y = ymin; y <= ymax; y++) {
      if (rmax[y] < 0) continue;
      pts[np++] = (pt){rmin[y], y};
      if (rmax[y] != rmin[y]) pts[np++] = (pt){rmax[y], y};
    }
    int nh = convex_hull(pts, np, hull);
    pt rect[4], c[4];
    double sside = min_area_rect(hull, nh, rect);
    if (sside < 3) continue;
    order_corners(rect, c);
    if (box_score(prob, w, h, c) < P->cfg.box_thresh) continue;
    /* unclip: the rectangle offset by d = area * ratio / perimeter on every side; the offset
     * polygon's minimum-area rectangle is the rectangle grown by d */
    double rw = hypot(c[1].x - c[0].x, c[1].y - c[0].y), rh = hypot(c[3].x - c[0].x, c[3].y - c[0].y);
    double d = rw * rh * P->cfg.unclip_ratio / (2 * (rw + rh));
    double ux = (c[1].x - c[0].x) / rw, uy = (c[1].y - c[0].y) / rw;
    double vx = (c[3].x - c[0].x) / rh, vy = (c[3].y - c[0].y) / rh;
    const int su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
    pt g[4], o[4];
    for (int k = 0; k < 4; k++)
      g[k] = (pt){c[k].x + d * (su[k] * ux + sv[k] * vx), c[k].y + d * (su[k] * uy + sv[k] * vy)};
    if (fmin(rw, rh) + 2 * d < 5) continue;
    order_corners(g, o);
    if (n == cap) {
      det_box *nb = realloc(boxes, sizeof(det_box) * (size_t)(cap *= 2));
      if (nb == NULL) goto done;
      boxes = nb;
    }
    for (int k = 0; k < 4; k++) {
      double x = nearbyint(o[k].x / w * img_w), y = nearbyint(o[k].y / h * img_h);
      boxes[n].q.p[2 * k] = (float)(x < 0 ? 0 : x > img_w ? img_w : x);
      boxes[n].q.p[2 * k + 1] = (float)(y < 0 ? 0 : y > img_h ? img_h : y);
    }
    n++;
  }
  /* sorted_boxes: by the top-left corner's y then x, then neighbours less than 10 pixels apart
   * vertically are put left to right */
  qsort(boxes, (size_t)n, sizeof(det_box), cmp_box);
  for (int i = 0; i + 1 < n; i++) {
    for (int j = i; j >= 0; j--) {
      if (fabsf(boxes[j + 1].q.p[1] - boxes[j].q.p[1]) < 10 && boxes[j + 1].q.p[0] < boxes[j].q.p[0]) {
        det_box t = boxes[j];
        boxes[j] = boxes[j + 1];
        boxes[j + 1] = t;
      } else {
        break;
      }
    }
  }
  *out = boxes;
  *n_out = n;
  boxes = NULL;
  rc = 0;
done:
  free(mask);
  free(pix);
  free(rmin);
  free(rmax);
  free(pts);
  free(hull);
  free(boxes);
  return rc;
}

/* ---- stages -------------------------------------------------------------------------------- */

static int call(ocr_pipeline *p, int stage, const float *in, const int64_t shape[4], const float **out, int64_t *oshape,
                int *orank, char *err, size_t err_size) {
  double t0 = now_ms();
  int rc = p->infer(p->ctx, stage, in, shape, out, oshape, orank, err, err_size);
  p->times[stage].infer_ms += now_ms() - t0;
  p->times[stage].calls++;
  return rc;
}

/* resize_norm_img of the cls and rec models: height 48, aspect kept, width at most `width`,
 * zero padding on the right. */
static float *line_input(const image *crop, int width) {
  float *x = calloc((size_t)3 * 48 * width, sizeof(float));
  if (x == NULL) return NULL;
  double rw = ceil(48.0 * crop->w / crop->h);
  int w = rw > width ? width : (int)rw;
  resize_norm(crop, w < 1 ? 1 : w, 48, x, width);
  return x;
}

static int classify(ocr_pipeline *p, image *crop, int *flipped, char *err, size_t err_size) {
  float *x = line_input(crop, 192);
  if (x == NULL) return fail(err, err_size, "ocr: out of memory");
  const int64_t shape[4] = {1, 3, 48, 192};
  const float *y;
  int64_t ys[8];
  int yr;
  int rc = call(p, OCR_CLS, x, shape, &y, ys, &yr, err, err_size);
  free(x);
  if (rc != 0) return -1;
  if (yr != 2 || ys[0] != 1 || ys[1] != 2) return fail(err, err_size, "ocr: the classifier's output is not [1, 2]");
  *flipped = y[1] > y[0] && y[1] > p->cfg.cls_thresh;
  if (*flipped && rotate(crop, 0) != 0) return fail(err, err_size, "ocr: out of memory");
  return 0;
}

static int recognize(ocr_pipeline *p, const image *crop, ocr_line *line, char *err, size_t err_size) {
  double ratio = (double)crop->w / crop->h;
  int width = ratio > 320.0 / 48 ? (int)(48 * ratio) : 320;
  float *x = line_input(crop, width);
  if (x == NULL) return fail(err, err_size, "ocr: out of memory");
  const int64_t shape[4] = {1, 3, 48, width};
  const float *y;
  int64_t ys[8];
  int yr;
  int rc = call(p, OCR_REC, x, shape, &y, ys, &yr, err, err_size);
  free(x);
  if (rc != 0) return -1;
  if (yr != 3 || ys[0] != 1 || ys[1] < 1 || ys[2] < 1)
    return fail(err, err_size, "ocr: the recognizer's output is not [1, T, classes]");
  if ((size_t)ys[2] != p->n_classes) {
    return fail(err, err_size,
                "ocr: the recognizer has %lld classes but its character list gives %zu (blank + %zu + space)",
                (long long)ys[2], p->n_classes, p->n_classes - 2);
  }
  const size_t steps = (size_t)ys[1], nc = (size_t)ys[2];
  size_t len = 0, maxc = 0; /* the text is at most one longest class string per step */
  for (size_t c = 0; c < nc; c++) {
    size_t l = strlen(p->classes[c]);
    if (l > maxc) maxc = l;
  }
  line->text = malloc(steps * maxc + 1);
  if (line->text == NULL) return fail(err, err_size, "ocr: out of memory");
  double conf = 0;
  int kept = 0;
  size_t prev = (size_t)-1;
  for (size_t t = 0; t < steps; t++) {
    const float *row = y + t * nc;
    size_t best = 0;
    for (size_t c = 1; c < nc; c++)
      if (row[c] > row[best]) best = c;
    if (best != 0 && best != prev) {
      size_t l = strlen(p->classes[best]);
      memcpy(line->text + len, p->classes[best], l);
      len += l;
      conf += row[best];
      kept++;
    }
    prev = best;
  }
  line->text[len] = '\0';
  line->score = kept > 0 ? (float)(conf / kept) : 0.0f;
  return 0;
}

int ocr_pipeline_run(ocr_pipeline *p, const uint8_t *rgb, int w, int h, char *err, size_t err_size) {
  if (p == NULL || rgb == NULL || w < 1 || h < 1) return fail(err, err_size, "ocr: no image");
  clear_lines(p);
  memset(p->times, 0, sizeof(p->times));
  const image img = {w, h, (uint8_t *)(uintptr_t)rgb};
  int rc = -1;
  float *x = NULL;
  det_box *boxes = NULL;
  int n_boxes = 0;

  /* detection */
  double t0 = now_ms();
  double lim = p->cfg.det_limit_side, ratio = (w > h ? w : h) > lim ? lim / (w > h ? w : h) : 1.0;
  int dh = (int)(nearbyint((int)(h * ratio) / 32.0) * 32), dw = (int)(nearbyint((int)(w * ratio) / 32.0) * 32);
  if (dh < 32) dh = 32;
  if (dw < 32) dw = 32;
  p->det_w = dw, p->det_h = dh;
  x = malloc(sizeof(float) * 3 * (size_t)dh * dw);
  if (x == NULL) return fail(err, err_size, "ocr: out of memory");
  resize_norm(&img, dw, dh, x, dw);
  const int64_t shape[4] = {1, 3, dh, dw};
  const float *prob;
  int64_t ps[8];
  int pr;
  if (call(p, OCR_DET, x, shape, &prob, ps, &pr, err, err_size) != 0) goto done;
  if (pr != 4 || ps[0] != 1 || ps[1] != 1 || ps[2] != dh || ps[3] != dw) {
    fail(err, err_size, "ocr: the detector's output is not [1, 1, %d, %d]", dh, dw);
    goto done;
  }
  if (db_boxes(p, prob, dw, dh, w, h, &boxes, &n_boxes) != 0) {
    fail(err, err_size, "ocr: out of memory");
    goto done;
  }
  p->times[OCR_DET].total_ms = now_ms() - t0;

  /* each box: crop, direction, text */
  for (int b = 0; b < n_boxes; b++) {
    double t1 = now_ms();
    image crop = {0, 0, NULL};
    if (crop_quad(&img, &boxes[b].q, &crop) != 0) {
      if (crop.rgb == NULL && crop.w > 0) {
        fail(err, err_size, "ocr: out of memory");
        goto done;
      }
      continue; /* degenerate box */
    }
    if ((double)crop.h / crop.w >= 1.5 && rotate(&crop, 1) != 0) {
      free(crop.rgb);
      fail(err, err_size, "ocr: out of memory");
      goto done;
    }
    int flipped = 0;
    if (p->cfg.use_cls) {
      int r = classify(p, &crop, &flipped, err, err_size);
      p->times[OCR_CLS].total_ms += now_ms() - t1;
      if (r != 0) {
        free(crop.rgb);
        goto done;
      }
    }
    double t2 = now_ms();
    ocr_line line = {{0}, NULL, 0, flipped};
    memcpy(line.box, boxes[b].q.p, sizeof(line.box));
    int r = recognize(p, &crop, &line, err, err_size);
    free(crop.rgb);
    p->times[OCR_REC].total_ms += now_ms() - t2;
    if (r != 0) {
      free(line.text);
      goto done;
    }
    if (line.score < p->cfg.text_score) {
      free(line.text);
      continue;
    }
    if (p->n_lines == p->cap_lines) {
      int ncap = p->cap_lines ? 2 * p->cap_lines : 16;
      ocr_line *nl = realloc(p->lines, sizeof(ocr_line) * (size_t)ncap);
      if (nl == NULL) {
        free(line.text);
        fail(err, err_size, "ocr: out of memory");
        goto done;
      }
      p->lines = nl;
      p->cap_lines = ncap;
    }
    p->lines[p->n_lines++] = line;
  }
  rc = 0;
done:
  free(x);
  free(boxes);
  return rc;
}

int ocr_line_count(const ocr_pipeline *p) { return p->n_lines; }
const char *ocr_line_text(const ocr_pipeline *p, int i) { return p->lines[i].text; }
float ocr_line_score(const ocr_pipeline *p, int i) { return p->lines[i].score; }
int ocr_line_flipped(const ocr_pipeline *p, int i) { return p->lines[i].flipped; }
void ocr_line_box(const ocr_pipeline *p, int i, float xy[8]) { memcpy(xy, p->lines[i].box, sizeof(float) * 8); }

void ocr_stage_time(const ocr_pipeline *p, int stage, int *calls, double *infer_ms, double *total_ms) {
  *calls = p->times[stage].calls;
  *infer_ms = p->times[stage].infer_ms;
  *total_ms = p->times[stage].total_ms;
}

void ocr_det_size(const ocr_pipeline *p, int *w, int *h) {
  *w = p->det_w;
  *h = p->det_h;
}
