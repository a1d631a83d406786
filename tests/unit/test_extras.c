/* Unit tests of a result's extras through the library (src/kg/provenance.c, engine.c):
 * row provenance and the metadata object once the session has facts or rules of its own
 * (and "unknown" without them), and where a statement's time went. */
#include <criterion/criterion.h>
#include <string.h>

#include "inputlayer.h"
#include "unit_fixture.h"

TestSuite(extras, .init = unit_suite_open, .fini = unit_suite_close, .timeout = 60);

static il_result *exec(const char *stmt) {
    il_result *r = il_execute(unit_session, stmt, strlen(stmt));
    cr_assert_eq(il_result_kind_of(r), IL_RESULT_TABLE, "%s", stmt);
    return r;
}

Test(extras, provenance_on_the_session_path) {
    unit_run(unit_session, "+e[(1, 2), (2, 3)]");
    unit_run(unit_session, "+r(X, Y) <- e(X, Y)");
    il_result *r = exec("?r(1, Y)");
    cr_assert_str_eq(il_result_row_provenance(r, 0), "unknown");
    cr_assert_null(il_result_metadata(r));
    il_result_free(r);

    unit_run(unit_session, "e(1, 4)");
    r = exec("?r(1, Y)");
    cr_assert_eq(il_result_nrows(r), 2);
    cr_assert_str_eq(il_result_row_provenance(r, 0), "persistent");
    cr_assert_str_eq(il_result_row_provenance(r, 1), "ephemeral");
    cr_assert_str_eq(il_result_metadata(r),
                     "{\"has_ephemeral\":true,\"ephemeral_sources\":[\"e\"],\"warnings\":"
                     "[\"Results include session data from 1 relation: e\"]}");
    il_result_free(r);

    /* rows of session rules are ephemeral, over stored facts too */
    unit_run(unit_session, "s(X) <- e(X, 3)");
    unit_run(unit_session, "s(X) <- e(X, 2)");
    r = exec("?s(X)");
    cr_assert_eq(il_result_nrows(r), 2);
    cr_assert_str_eq(il_result_row_provenance(r, 0), "ephemeral");
    cr_assert_str_eq(il_result_row_provenance(r, 1), "ephemeral");
    cr_assert(strstr(il_result_metadata(r), "\"Results use 2 session rules\""), "%s",
              il_result_metadata(r));
    il_result_free(r);

    /* `.why` sees no session data and classifies nothing */
    r = exec(".why ?r(1, Y)");
    cr_assert_null(il_result_metadata(r));
    cr_assert_str_eq(il_result_row_provenance(r, 0), "unknown");
    il_result_free(r);
}

Test(extras, timing_adds_up) {
    unit_run(unit_session, "+e[(1, 2), (2, 3)]");
    il_result *r = exec("?e(1, Y)");
    il_timing t = il_result_timing(r);
    cr_assert_gt(t.total_ns, 0);
    cr_assert_gt(t.eval_ns, 0);
    cr_assert_eq(t.prove_ns, 0);
    cr_assert_eq(t.parse_ns + t.eval_ns + t.other_ns, t.total_ns);
    il_result_free(r);
    unit_run(unit_session, "+r(X, Y) <- e(X, Y)");
    r = exec(".why ?r(1, Y)");
    t = il_result_timing(r);
    cr_assert_gt(t.prove_ns, 0);
    cr_assert_eq(t.parse_ns + t.eval_ns + t.prove_ns + t.other_ns, t.total_ns);
    il_result_free(r);
}
