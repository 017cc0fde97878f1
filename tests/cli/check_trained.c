/* check_trained.c — the heads that training made (samples/trained/).
 *
 * samples/train_tiny.py trained a tiny attention-only transformer with
 * PyTorch and exported both of its layers as mhaviz inputs, for lesson 1's
 * sentence and a longer story, beside the attention maps PyTorch itself
 * computed (npy/<text>_layer<L>_att.npy, (n_heads * T, T)). No PyTorch here:
 * the maps PyTorch wrote are the independent reference. */
#include "io/input.h"
#include "core/measures.h"
#include "core/mha.h"
#include "io/npy.h"
#include "core/status.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIR "samples/trained"
static const char *const TEXTS[] = {"lesson1", "story"};

typedef struct {
    MhaInput in;
    MhaState st;
} Layer;

/* Load DIR/<text>_layer<layer>.json and run it. */
static void run_layer(const char *text, int layer, Layer *l)
{
    char path[256], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, DIR "/%s_layer%d.json", text, layer);
    int rc = input_load(path, &l->in, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "%s: %s", path, err);
    ck_assert_ptr_null(l->in.warnings);
    ck_assert_int_eq(mha_state_build(&l->st, &l->in.cfg, 0), MHAVIZ_OK);
    mha_forward(&l->in.cfg, &l->in.w, l->in.x, &l->st);
}

static void layer_free(Layer *l)
{
    mha_state_free(&l->st);
    input_free(&l->in);
}

/* mhaviz's maps equal PyTorch's (need_weights=True, average_attn_weights=False)
 * within 1e-5 on every cell, masked cells included (PyTorch's are 0 too). */
START_TEST(maps_equal_pytorch)
{
    const char *text = TEXTS[_i / 2];
    const int layer = 1 + _i % 2;
    Layer l;
    run_layer(text, layer, &l);
    const int T = l.in.cfg.T, H = l.in.cfg.n_heads;
    float *ref = malloc((size_t)H * T * T * sizeof *ref); /* (n_heads, T, T) */
    ck_assert_ptr_nonnull(ref);
    char file[128], err[MHAVIZ_ERRLEN];
    snprintf(file, sizeof file, "npy/%s_layer%d_att.npy", text, layer);
    int rc = npy_read_floats(DIR, file, H * T, T, 0, ref, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "%s", err);
    double worst = 0;
    for (int i = 0; i < H * T * T; i++)
        worst = fmax(worst, fabs((double)l.st.att[i] - ref[i]));
    ck_assert_msg(worst <= 1e-5, "%s layer %d: max |mhaviz - PyTorch| = %g", text, layer, worst);
    free(ref);
    layer_free(&l);
}
END_TEST

/* Layer 2's x is the residual stream entering it: layer 1's x plus layer
 * 1's output (the model has no layer norm before attention), here
 * recomputed by mhaviz from layer 1's input (float32 sums in another order
 * than PyTorch's: 1e-4 on values of order 1). */
START_TEST(layer2_x_is_the_residual_stream)
{
    const char *text = TEXTS[_i];
    Layer l1, l2;
    run_layer(text, 1, &l1);
    run_layer(text, 2, &l2);
    const int n = l1.in.cfg.T * l1.in.cfg.d_model;
    ck_assert_int_eq(l2.in.cfg.T * l2.in.cfg.d_model, n);
    for (int i = 0; i < n; i++)
        ck_assert_double_eq_tol(l2.in.x[i], l1.in.x[i] + l1.st.out[i], 1e-4);
    layer_free(&l1);
    layer_free(&l2);
}
END_TEST

/* How many heads of a layer the report gives role a or role b. */
static int heads_with_role(const Layer *l, MeasuresRole a, MeasuresRole b)
{
    const int T = l->in.cfg.T;
    int ids[64], n = 0;
    ck_assert_int_le(T, 64);
    measures_token_ids(l->in.tokens, T, ids);
    for (int h = 0; h < l->in.cfg.n_heads; h++) {
        MapMeasures m;
        measures_map(l->st.att + (size_t)h * T * T, T, l->in.cfg.causal, ids, &m);
        n += m.role == a || m.role == b;
    }
    return n;
}

/* Training made the first half of an induction circuit: on both texts,
 * layer 1 has a previous-token head. */
START_TEST(training_made_a_previous_token_head)
{
    const char *text = TEXTS[_i];
    Layer l1;
    run_layer(text, 1, &l1);
    ck_assert_msg(heads_with_role(&l1, MEASURES_PREVIOUS_TOKEN, MEASURES_PREVIOUS_TOKEN) >= 1,
                  "%s: no previous-token head in layer 1", text);
    layer_free(&l1);
}
END_TEST

/* And the second half: on the story, where names come back with their
 * surnames, layer 2 has a head that finds an earlier mention
 * (duplicate-token) or the token after it (induction). (On lesson 1's
 * sentence the token after the first "John" is the second "John"'s
 * previous token, a cell that counts as previous-token, so only the last
 * "Mary" can show induction: one row, under MEASURES_MIN_ROLE_ROWS.) */
START_TEST(training_made_an_induction_head)
{
    Layer l2;
    run_layer("story", 2, &l2);
    ck_assert_msg(heads_with_role(&l2, MEASURES_DUPLICATE_TOKEN, MEASURES_INDUCTION) >= 1,
                  "story: no duplicate-token or induction head in layer 2");
    layer_free(&l2);
}
END_TEST

/* story.json holds the story's two layers in one file ("layers"): each
 * layer the same tokens, shapes, x and weights as story_layer<L>.json. */
START_TEST(story_json_holds_both_layers)
{
    char err[MHAVIZ_ERRLEN];
    MhaInput *all = NULL;
    int n = 0;
    ck_assert_msg(input_load_layers(DIR "/story.json", NULL, &all, &n, err, sizeof err) == MHAVIZ_OK, "%s", err);
    ck_assert_int_eq(n, 2);
    for (int i = 0; i < n; i++) {
        Layer l;
        run_layer("story", i + 1, &l);
        const MhaConfig *a = &all[i].cfg, *b = &l.in.cfg;
        ck_assert(a->T == b->T && a->d_model == b->d_model && a->n_heads == b->n_heads &&
                  a->n_kv_heads == b->n_kv_heads && a->causal == b->causal);
        for (int t = 0; t < a->T; t++)
            ck_assert_str_eq(all[i].tokens[t], l.in.tokens[t]);
        const size_t xd = (size_t)a->T * a->d_model * sizeof(float), dd = (size_t)a->d_model * a->d_model * sizeof(float);
        ck_assert_int_eq(memcmp(all[i].x, l.in.x, xd), 0);
        const float *mine[] = {all[i].w.W_q, all[i].w.W_k, all[i].w.W_v, all[i].w.W_o};
        const float *theirs[] = {l.in.w.W_q, l.in.w.W_k, l.in.w.W_v, l.in.w.W_o};
        for (int k = 0; k < 4; k++)
            ck_assert_int_eq(memcmp(mine[k], theirs[k], dd), 0);
        ck_assert_int_eq(memcmp(all[i].w.b_o, l.in.w.b_o, (size_t)a->d_model * sizeof(float)), 0);
        layer_free(&l);
        input_free(&all[i]);
    }
    free(all);
}
END_TEST

Suite *trained_suite(void)
{
    Suite *s = suite_create("trained");
    TCase *tc = tcase_create("trained");
    tcase_add_loop_test(tc, maps_equal_pytorch, 0, 4);
    tcase_add_loop_test(tc, layer2_x_is_the_residual_stream, 0, 2);
    tcase_add_loop_test(tc, training_made_a_previous_token_head, 0, 2);
    tcase_add_test(tc, training_made_an_induction_head);
    tcase_add_test(tc, story_json_holds_both_layers);
    suite_add_tcase(s, tc);
    return s;
}
