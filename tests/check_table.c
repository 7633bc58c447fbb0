/* tools/common/table.c: tables fit the width they are given, by the
 * elastic column alone, its long cells cut in the middle. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

/* T printed at WIDTH into a new string. */
static char *print(const table *t, int width)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    table_print(t, f, width);
    fclose(f);
    return buf;
}

START_TEST(test_shorten)
{
    char *s = table_shorten("grad/layers.0.attention.weight", 15);
    ck_assert_str_eq(s, "grad/l...weight");
    free(s);
    s = table_shorten("short", 15);
    ck_assert_str_eq(s, "short");
    free(s);
    s = table_shorten("exactly", 7);
    ck_assert_str_eq(s, "exactly");
    free(s);
}
END_TEST

START_TEST(test_fit)
{
    table *t = table_new(3, 2);
    table_column(t, 0, "tensor", true, true);
    table_column(t, 1, "count", false, false);
    table_column(t, 2, "fp16 %", false, false);
    table_add(t, "%s", "grad/a.very.long.name.of.a.tensor.in.a.deep.model.layer.17.mlp.weight");
    table_add(t, "%d", 12345);
    table_add(t, "%s", "0.21");
    table_add(t, "%s", "b");
    table_add(t, "%d", 7);
    table_add(t, "%s", "100");
    char *wide = print(t, 200), *narrow = print(t, 40);
    /* at 200 nothing is cut: the name whole, the numbers right-aligned */
    ck_assert_ptr_nonnull(strstr(wide, "layer.17.mlp.weight  12345    0.21\n"));
    ck_assert_ptr_nonnull(strstr(wide, "  tensor"));
    /* at 40 every line fits, the name cut in its middle */
    for (char *line = narrow, *end; *line; line = end + 1) {
        end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        ck_assert_int_le(end - line, 40);
    }
    ck_assert_ptr_nonnull(strstr(narrow, "..."));
    ck_assert_ptr_nonnull(strstr(narrow, "12345    0.21\n"));
    ck_assert_ptr_nonnull(strstr(narrow, "      7     100\n"));
    free(wide);
    free(narrow);
    table_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("table");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, test_shorten);
    tcase_add_test(tc, test_fit);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
