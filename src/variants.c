/* variants.c — several K/V layouts of one input: a sub-folder each, the
 * comparison at the top. */
#include "variants.h"
#include "report.h"
#include "status.h"

#include <stdio.h>

void variants_folder(char *buf, size_t len, int n_kv)
{
    snprintf(buf, len, "kv%d", n_kv);
}

int variants_write(const Variant *v, int n, Renderer *r, const OutDir *out, int steps, int layers, Timing *tm,
                   char *err, size_t errlen)
{
    if (n == 1)
        return variant_write(&v[0], r, out, "", steps, tm, err, errlen);
    int rc = MHAVIZ_OK;
    for (int i = 0; i < n && rc == MHAVIZ_OK; i++) {
        char sub[16];
        variants_folder(sub, sizeof sub, v[i].in.cfg.n_kv_heads);
        rc = variant_write(&v[i], r, out, sub, steps, tm, err, errlen);
    }
    (void)layers;
    if (rc == MHAVIZ_OK)
        rc = report_write_variants(out->tmp, v, n, err, errlen);
    return rc;
}
