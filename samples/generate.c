/* generate.c — writes the shipped samples (run by `make samples`).
 *
 *   generate_samples DIR   ->  DIR/lesson1.json, lesson2_gqa.json, lesson3_mqa.json,
 *                              DIR/base_paper.json, DIR/random_init.json
 *
 * lesson1.json is designed by hand: it is what `mhaviz init --designed`
 * writes for lesson 1's sentence (src/models/init.c; samples/README.md explains the
 * construction), each head doing one thing the lesson names. lesson2 and
 * lesson3 are lesson1 with its K/V heads mean-pooled into 2 groups, then 1
 * (src/core/pool.c, as `--kv-heads` does).
 * base_paper.json and random_init.json are seeded random models, exactly
 * what `mhaviz init` writes for the same options. Same program, same bytes. */
#include "models/init.h"
#include "io/input.h"
#include "core/status.h"

#include <stdio.h>

/* ---- writing ------------------------------------------------------------ */

static int write_model(const char *dir, const char *name, const InitModel *m, int digits)
{
    char path[4096], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "generate_samples: cannot write %s\n", path);
        return MHAVIZ_EIO;
    }
    int rc = init_write(f, m, digits, err, sizeof err);
    if (fclose(f) != 0 && rc == MHAVIZ_OK)
        rc = MHAVIZ_EIO;
    if (rc != MHAVIZ_OK)
        fprintf(stderr, "generate_samples: %s: %s\n", path, err);
    return rc;
}

/* A model exactly as `mhaviz init` makes it, written to dir/name. */
static int write_init(const char *dir, const char *name, const InitOptions *o, int digits)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    int rc = init_model(o, &m, err, sizeof err);
    if (rc != MHAVIZ_OK) {
        fprintf(stderr, "generate_samples: %s: %s\n", name, err);
        return rc;
    }
    rc = write_model(dir, name, &m, digits);
    init_model_free(&m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: generate_samples DIR\n");
        return MHAVIZ_EUSAGE;
    }
    const char *dir = argv[1];
    char err[MHAVIZ_ERRLEN];
    InitModel m;

    /* Lesson 1 (MHA), then the same layer with 2 K/V groups, then 1. Its
     * subject head looks for the earliest name: Mary, or John. */
    int rc = init_designed("Mary gave the book to John because John had helped Mary", 4, 0,
                           "Mary John", &m, err, sizeof err);
    if (rc == MHAVIZ_OK)
        rc = write_model(dir, "lesson1.json", &m, 6);
    if (rc == MHAVIZ_OK && (rc = init_model_pool(&m, 2, err, sizeof err)) == MHAVIZ_OK)
        rc = write_model(dir, "lesson2_gqa.json", &m, 6);
    if (rc == MHAVIZ_OK && (rc = init_model_pool(&m, 1, err, sizeof err)) == MHAVIZ_OK)
        rc = write_model(dir, "lesson3_mqa.json", &m, 6);
    init_model_free(&m);
    if (rc != MHAVIZ_OK) {
        if (rc != MHAVIZ_EIO) /* write_model said why */
            fprintf(stderr, "generate_samples: lessons 1-3: %s\n", err);
        return rc;
    }

    /* The original Transformer's base shape: d_model 512, 8 heads of 64,
     * embeddings + sinusoidal positions, as in Vaswani et al. 2017. Two
     * digits per number keep the file small (the cost table needs shapes). */
    const InitOptions base = {"the animal didn't cross the street because it was too tired",
                              512, 8, 0, 2017, 1};
    if ((rc = write_init(dir, "base_paper.json", &base, 2)) != MHAVIZ_OK)
        return rc;

    /* Lesson 1's sentence and shape, before any training. */
    const InitOptions fresh = {"Mary gave the book to John because John had helped Mary",
                               16, 4, 0, 1, 1};
    return write_init(dir, "random_init.json", &fresh, 4);
}
