/* PP-OCR end to end: text detection, direction classification and recognition around any
 * inference engine.
 *
 * The pipeline follows rapidocr_onnxruntime 1.4.4 / PaddleOCR (the source of the models that
 * `make models` builds):
 *   det: resize so the longer side is at most det_limit_side (PaddleOCR's default limit_type
 *        "max", 960) and both sides are multiples of 32, BGR, (x/255 - 0.5)/0.5, NCHW
 *     -> probability map -> DB post-processing: threshold (0.3), 2x2 dilation, 8-connected regions
 *        (the outer contours), minimum-area rectangle of each, mean probability inside it must
 *        reach box_thresh (0.5), unclip (grow every side by area * 1.6 / perimeter), boxes in
 *        image pixels, sorted top to bottom, left to right;
 *   crop: each box's quadrilateral warped (perspective, bilinear, replicated border) to an upright
 *        image; crops at least 1.5x taller than wide are turned 90 degrees;
 *   cls: 3x48x192 (height 48, aspect kept, zero padding), 2 classes "0"/"180": a crop is turned
 *        180 degrees when "180" wins with probability above cls_thresh (0.9);
 *   rec: 3x48xW, W = max(320, 48 * aspect), CTC over the character list the recognizer carries in
 *        its metadata (key "character", one entry per line; class 0 is the CTC blank and the last
 *        class a space): argmax per step, repeats merged, blanks dropped; the line's confidence is
 *        the mean probability of the characters kept. Lines under text_score (0.5) are dropped.
 * Differences from rapidocr: bilinear instead of bicubic warping; each crop runs alone (batch 1),
 * so rec widths do not depend on other lines; holes inside text regions are not separate contours.
 *
 * The engine is a callback, so the same pre/post-processing runs over q8rt (ocr-demo.c) and over
 * ONNX Runtime (ocr_ort.py, through ctypes), and their results can be compared line by line. */
#ifndef Q8RT_EXAMPLES_OCR_H
#define Q8RT_EXAMPLES_OCR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { OCR_DET = 0, OCR_CLS = 1, OCR_REC = 2, OCR_STAGES = 3 };

/* Run model `stage` on a float32 NCHW input of shape in_shape[0..3]. On success set *out to its
 * float32 output (valid until the next call for the same stage), out_shape[0..out_rank-1] and
 * return 0; on failure write a message into err and return nonzero. */
typedef int (*ocr_infer_fn)(void *ctx, int stage, const float *in, const int64_t *in_shape, const float **out,
                            int64_t *out_shape, int *out_rank, char *err, size_t err_size);

typedef struct ocr_config {
  int det_limit_side; /* 960 */
  float det_thresh;   /* 0.3 */
  float box_thresh;   /* 0.5 */
  float unclip_ratio; /* 1.6 */
  int max_candidates; /* 1000 */
  int use_cls;        /* 1 */
  float cls_thresh;   /* 0.9 */
  float text_score;   /* 0.5 */
} ocr_config;

void ocr_config_default(ocr_config *cfg);

typedef struct ocr_pipeline ocr_pipeline;

/* `character` is the recognizer's character list (metadata "character"), `character_len` bytes.
 * cfg NULL: the defaults. NULL on failure (message in err). */
ocr_pipeline *ocr_pipeline_create(ocr_infer_fn infer, void *ctx, const char *character, size_t character_len,
                                  const ocr_config *cfg, char *err, size_t err_size);
void ocr_pipeline_free(ocr_pipeline *p);

/* Read an image (RGB, 8 bits, rows of w*3 bytes) and fill the results below. 0 on success. */
int ocr_pipeline_run(ocr_pipeline *p, const uint8_t *rgb, int w, int h, char *err, size_t err_size);

/* Results of the last run, in reading order. */
int ocr_line_count(const ocr_pipeline *p);
const char *ocr_line_text(const ocr_pipeline *p, int i); /* UTF-8 */
float ocr_line_score(const ocr_pipeline *p, int i);
int ocr_line_flipped(const ocr_pipeline *p, int i);           /* 1 when the classifier turned it 180 degrees */
void ocr_line_box(const ocr_pipeline *p, int i, float xy[8]); /* 4 corners, clockwise from top-left */

/* Times of the last run for a stage: model calls, milliseconds inside the engine, milliseconds
 * of the whole stage (pre-processing + engine + post-processing). */
void ocr_stage_time(const ocr_pipeline *p, int stage, int *calls, double *infer_ms, double *total_ms);
/* Size of the detector input of the last run. */
void ocr_det_size(const ocr_pipeline *p, int *w, int *h);

#ifdef __cplusplus
}
#endif

#endif
