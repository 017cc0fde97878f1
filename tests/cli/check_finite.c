/* check_finite.c — finite inputs whose forward pass overflows float32 are
 * refused (exit 1) with the place of the first overflow, not drawn as
 * garbage. */
#include "core/finite.h"
#include "core/mha.h"
#include "core/status.h"

#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* T = 3, d_model = 4, 2 heads of 2, MHA: small enough to name every cell. */
static const MhaConfig CFG = {3, 4, 2, 2, 2, 1, {0}};

/* A state whose every buffer holds finite numbers (0.25: any finite value). */
static void finite_state(MhaState *s)
{
    ck_assert_int_eq(mha_state_build(s, &CFG, 0), MHAVIZ_OK);
    const size_t td = (size_t)CFG.T * CFG.d_model, tt = (size_t)CFG.n_heads * CFG.T * CFG.T;
    for (size_t i = 0; i < td; i++)
        s->q[i] = s->k[i] = s->v[i] = s->concat[i] = s->out[i] = 0.25f;
    for (size_t i = 0; i < tt; i++)
        s->att[i] = 0.25f;
}

START_TEST(all_finite_passes)
{
    MhaState s;
    char err[MHAVIZ_ERRLEN] = "";
    finite_state(&s);
    ck_assert_int_eq(finite_check_pass(&CFG, &s, "t.json: the heads", err, sizeof err), MHAVIZ_OK);
    ck_assert_str_eq(err, "");
    mha_state_free(&s);
}
END_TEST

START_TEST(names_the_attention_cell)
{
    MhaState s;
    char err[MHAVIZ_ERRLEN];
    finite_state(&s);
    /* att is (n_heads, T, T): head 1, query 2, key 0 is index (1*3 + 2)*3 + 0 = 15. */
    s.att[15] = NAN;
    s.out[0] = INFINITY; /* later in the pass: the attention is named first */
    ck_assert_int_eq(finite_check_pass(&CFG, &s, "t.json: the heads", err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "t.json: the heads: the numbers overflow float32: "
                              "the attention of head 1, query 2, key 0") != NULL, "%s", err);
    ck_assert_msg(strstr(err, "is not a number") != NULL, "%s", err);
    mha_state_free(&s);
}
END_TEST

START_TEST(names_the_projection_cell)
{
    MhaState s;
    char err[MHAVIZ_ERRLEN];
    finite_state(&s);
    /* q is (T, d_model): token 1, column 3 is index 1*4 + 3 = 7. */
    s.q[7] = -INFINITY;
    ck_assert_int_eq(finite_check_pass(&CFG, &s, "x", err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "q at token 1, column 3 is infinite") != NULL, "%s", err);
    mha_state_free(&s);
}
END_TEST

/* Through the CLI: every number in the file is a valid float32 (the loader
 * accepts it), but W_q = W_k = 1e30 I makes q.k = 1e60, over 3.4e38. */
START_TEST(cli_refuses_an_overflowing_pass)
{
    const char *bin = getenv("MHAVIZ_BIN");
    ck_assert_msg(bin != NULL, "MHAVIZ_BIN is not set (run through make test)");
    char dir[] = "/tmp/mhaviz-finite-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char out[64], log[64];
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(log, sizeof log, "%s/stderr", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *argv[] = {(char *)bin, "-q", "-o", out, "tests/data/forward_overflow.json", NULL};
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    char msg[1024] = "";
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(msg, 1, sizeof msg - 1, f);
    msg[n] = '\0';
    fclose(f);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == MHAVIZ_EINPUT, "status %d: %s", st, msg);
    ck_assert_msg(strstr(msg, "mhaviz: tests/data/forward_overflow.json: the heads: "
                              "the numbers overflow float32: the attention of head 0, query 0, key 0")
                  != NULL, "%s", msg);
    struct stat sb;
    ck_assert_int_ne(stat(out, &sb), 0); /* no output folder */
    unlink(log);
    ck_assert_int_eq(rmdir(dir), 0); /* and nothing else left beside it */
}
END_TEST

Suite *finite_suite(void)
{
    Suite *s = suite_create("finite");
    TCase *tc = tcase_create("overflow");
    tcase_add_test(tc, all_finite_passes);
    tcase_add_test(tc, names_the_attention_cell);
    tcase_add_test(tc, names_the_projection_cell);
    tcase_add_test(tc, cli_refuses_an_overflowing_pass);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
