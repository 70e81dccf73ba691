/* The in-process launcher: collectives, point-to-point, deadlines, abort; and blobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nettune/clock.h"
#include "nettune/launcher.h"

static int fn_collectives(nt_launcher_t *l, void *arg)
{
    int me = nt_launcher_rank(l), n = nt_launcher_size(l), v[8], root = 2;
    int lr, ls;
    (void)arg;
    if (l->ops->allgather(l, &me, v, sizeof(int), 5.0) != NT_OK)
        return 1;
    for (int i = 0; i < n; i++)
        if (v[i] != i)
            return 2;
    int b = me == root ? 4242 : -1;
    if (l->ops->bcast(l, &b, sizeof(b), root, 5.0) != NT_OK || b != 4242)
        return 3;
    if (l->ops->barrier(l, 5.0) != NT_OK)
        return 4;
    l->ops->local_group(l, &lr, &ls);
    if (lr != me % 3 || ls != (me < 3 ? 3 : n - 3))
        return 5;
    /* Ring exchange with blobs of rank-dependent size. */
    {
        char msg[64], *got;
        size_t len;
        int next = (me + 1) % n, prev = (me + n - 1) % n;
        snprintf(msg, sizeof(msg), "hello from %d", me);
        if (nt_launcher_send_blob(l, next, 7, msg, strlen(msg), 5.0) != NT_OK)
            return 6;
        if (nt_launcher_recv_blob(l, prev, 7, &got, &len, 5.0) != NT_OK)
            return 7;
        snprintf(msg, sizeof(msg), "hello from %d", prev);
        int bad = strcmp(got, msg) != 0 || len != strlen(msg);
        free(got);
        if (bad)
            return 8;
    }
    return 0;
}

static void test_collectives(void **state)
{
    int code = 0;
    (void)state;
    assert_int_equal(nt_inproc_run(5, 3, fn_collectives, NULL, &code), 0);
    assert_int_equal(code, -1);
}

static int fn_timeout(nt_launcher_t *l, void *arg)
{
    double *elapsed = arg;
    if (nt_launcher_rank(l) == 0) {
        int x;
        double t0 = nt_clock_s();
        nt_status_t st = l->ops->recv(l, 1, 3, &x, sizeof(x), 0.2);
        elapsed[0] = nt_clock_s() - t0;
        return st == NT_ERR_TIMEOUT ? 0 : 1;
    }
    return 0; /* rank 1 never sends: a dead peer */
}

static void test_recv_deadline(void **state)
{
    double elapsed = 0;
    (void)state;
    assert_int_equal(nt_inproc_run(2, 1, fn_timeout, &elapsed, NULL), 0);
    assert_true(elapsed >= 0.19 && elapsed < 2.0);
}

static int fn_abort(nt_launcher_t *l, void *arg)
{
    (void)arg;
    if (nt_launcher_rank(l) == 1) {
        l->ops->abort(l, 3);
        return 0;
    }
    int x;
    /* Without the abort this would wait 30 s: the abort must wake it with a peer error. */
    return l->ops->recv(l, 1, 1, &x, sizeof(x), 30.0) == NT_ERR_PEER ? 0 : 1;
}

static void test_abort_wakes_peers(void **state)
{
    int code = 0;
    double t0 = nt_clock_s();
    (void)state;
    assert_int_equal(nt_inproc_run(3, 1, fn_abort, NULL, &code), 0);
    assert_int_equal(code, 3);
    assert_true(nt_clock_s() - t0 < 10.0);
}

static int fn_size_mismatch(nt_launcher_t *l, void *arg)
{
    (void)arg;
    if (nt_launcher_rank(l) == 0) {
        char b[8] = {0};
        return l->ops->send(l, 1, 0, b, 8, 1.0) == NT_OK ? 0 : 1;
    }
    char b[4];
    return l->ops->recv(l, 0, 0, b, 4, 1.0) == NT_ERR_PEER ? 0 : 1;
}

static void test_size_mismatch(void **state)
{
    (void)state;
    assert_int_equal(nt_inproc_run(2, 2, fn_size_mismatch, NULL, NULL), 0);
}

static void test_local_launcher(void **state)
{
    nt_launcher_t *l = nt_launcher_local_create();
    int v = 5, out = 0, x;
    (void)state;
    assert_non_null(l);
    assert_int_equal(nt_launcher_rank(l), 0);
    assert_int_equal(nt_launcher_size(l), 1);
    assert_int_equal(l->ops->allgather(l, &v, &out, sizeof(v), 1.0), NT_OK);
    assert_int_equal(out, 5);
    assert_int_equal(l->ops->recv(l, 0, 0, &x, sizeof(x), 1.0), NT_ERR_INVALID);
    nt_launcher_local_destroy(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collectives),   cmocka_unit_test(test_recv_deadline),
        cmocka_unit_test(test_abort_wakes_peers), cmocka_unit_test(test_size_mismatch),
        cmocka_unit_test(test_local_launcher),
    };
    return cmocka_run_group_tests_name("core_launcher", tests, NULL, NULL);
}
