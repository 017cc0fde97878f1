/* outdir.h — an output folder that appears whole or not at all.
 *
 * Outputs are written into a temporary folder beside the target and renamed
 * into place by outdir_commit. The folder's marker file lists every file and
 * sub-folder the run wrote, whatever they are, so outdir keeps no list of
 * output names. An existing target is replaced only when it is empty, or
 * holds a marker and nothing the marker does not list; of the earlier
 * output only what its marker lists is deleted: a file of the user's saved
 * there, before the check or after it, is never deleted. */
#ifndef MHAVIZ_OUTDIR_H
#define MHAVIZ_OUTDIR_H

#include <stddef.h>

/* The file every mhaviz output folder holds, listing what the run wrote, so
 * a later run knows what it may replace. */
#define OUTDIR_MARKER ".mhaviz-output"

typedef struct {
    char *target; /* where the outputs go */
    char *tmp;    /* the temporary folder being written */
} OutDir;

/* Check that target may be (re)placed and create the temporary folder.
 * Returns MHAVIZ_OK or MHAVIZ_EIO (err says why, naming the folder). On
 * success finish with outdir_commit or outdir_abort. */
int outdir_begin(OutDir *o, const char *target, char *err, size_t errlen);

/* Path of file name inside the temporary folder; the caller frees it.
 * NULL when out of memory. */
char *outdir_path(const OutDir *o, const char *name);

/* List what the temporary folder holds in its marker and move it into
 * place, replacing an earlier mhaviz output folder (checked again first).
 * Returns MHAVIZ_OK or MHAVIZ_EIO; on failure the temporary folder is
 * removed and the earlier output is left as it was, unless another run's
 * folder took its place meanwhile. Frees *o either way.
 * On success err is "" or, when files appeared in the earlier output after
 * the check, a note saying where they are kept (beside the target, as
 * "<target>.kept-XXXXXX"): print it as a warning. */
int outdir_commit(OutDir *o, char *err, size_t errlen);

/* Rewrite a message that names a file in the temporary folder so that it
 * names that file's place in the target, the folder the user asked for
 * (".out.tmp-Ab12Cd/report.json" -> "out/report.json"). */
void outdir_name_target(const OutDir *o, char *msg, size_t msglen);

/* Remove the temporary folder and everything in it; frees *o. */
void outdir_abort(OutDir *o);

/* The names of a run's files, the same in the pictures and the reports:
 * head h's of n_heads ("head_07", from 100 heads "head_007": the names
 * sort in head order), and the sub-folder of the variant with n_kv K/V
 * heads ("kv2"). buf holds at least 32 bytes. */
void outdir_head_name(char *buf, size_t len, int h, int n_heads);
void outdir_variant_folder(char *buf, size_t len, int n_kv);
/* The sub-folder of a model's layer in a run over several ("layer_05",
 * from 100 "layer_100"). */
void outdir_layer_folder(char *buf, size_t len, int layer);

/* The names of a run's files, in every folder or at the top; every writer
 * and run/ take them from here. A head's map is outdir_head_name's name
 * + OUTDIR_PNG ("head_03.png"), its scores' map + OUTDIR_SCORES_PNG, its
 * matrices in .npy + OUTDIR_ATTENTION_NPY or OUTDIR_SCORES_NPY; the wide
 * head's are named the same from OUTDIR_SINGLE_HEAD. */
#define OUTDIR_REPORT_TXT "report.txt"
#define OUTDIR_REPORT_JSON "report.json"
#define OUTDIR_LESSON_PAGE "lesson.html"
#define OUTDIR_OVERVIEW "overview.png"
#define OUTDIR_SHARPNESS "sharpness.png"
#define OUTDIR_ARCHITECTURE "architecture.png"
#define OUTDIR_VARIANTS "variants.png"
#define OUTDIR_KV_CACHE "kv_cache.png"
#define OUTDIR_MODEL_OVERVIEW "model_overview.png"
#define OUTDIR_LAYERS "layers.png"
#define OUTDIR_SINGLE_HEAD "single_head"
#define OUTDIR_PNG ".png"
#define OUTDIR_SCORES_PNG "_scores.png"
#define OUTDIR_ATTENTION_NPY "_attention.npy"
#define OUTDIR_SCORES_NPY "_scores.npy"
#define OUTDIR_OUTPUT_MULTI_NPY "output_multi_head.npy"
#define OUTDIR_OUTPUT_SINGLE_NPY "output_single_head.npy"

/* The pull slide of query q among T tokens: "query_06.png", its number
 * zero-padded to the digits of the last token's, at least two
 * ("query_006.png" from 100 tokens). buf holds at least 32 bytes. */
void outdir_query_name(char *buf, size_t len, int q, int T);

/* The SVG written beside the picture at png_path (--svg): its ".png"
 * replaced by ".svg" ("out/head_00.png" -> "out/head_00.svg"), or ".svg"
 * added to a name without one. The caller frees it; NULL when out of
 * memory. */
char *outdir_svg_beside(const char *png_path);

#endif
