/* The fuzz targets of the recipes' parsers (fuzz.h): a recipe's text and
 * a recipe's statistics as JSON.  Beyond not crashing, each checks that a
 * refusal leaves its output alone and carries a message, and that what is
 * accepted is written back into text that reads back to the same. */
#include <stdlib.h>
#include <string.h>

#include "fpkit-recipe.h"
#include "fuzz.h"

int fuzz_recipe(const uint8_t *data, size_t size)
{
    char *text = fuzz_string(data, size);
    fpk_recipe r, before, back;
    memset(&r, 0xab, sizeof r);
    before = r;
    fpk_error err = {.code = -1};
    int rc = fpk_recipe_parse(text, &r, &err);
    if (rc != FPK_OK) {
        fuzz_check(rc == FPK_ESYNTAX && err.code == rc && err.msg[0] &&
                       memcmp(&r, &before, sizeof r) == 0,
                   "a refused recipe without a message, or with output");
    } else {
        fuzz_check(fpk_recipe_valid(&r, &err), "an accepted recipe is not valid");
        char buf[256];
        size_t n = fpk_recipe_format(&r, buf, sizeof buf);
        fuzz_check(n < sizeof buf, "a recipe's text is longer than 255 bytes");
        memset(&back, 0, sizeof back);
        fuzz_check(fpk_recipe_parse(buf, &back, &err) == FPK_OK, "a recipe's text does not parse");
        char again[256];
        fpk_recipe_format(&back, again, sizeof again);
        fuzz_check(strcmp(buf, again) == 0, "a recipe's text does not read back the same");
    }
    free(text);
    return 0;
}

int fuzz_recipe_stats_json(const uint8_t *data, size_t size)
{
    char *text = fuzz_string(data, size);
    static fpk_recipe_stats s, t, before;
    memset(&s, 0xab, sizeof s);
    before = s;
    fpk_error err = {.code = -1};
    int rc = fpk_recipe_stats_from_json(&s, text, &err);
    if (rc != FPK_OK) {
        fuzz_check(err.code == rc && err.msg[0] && memcmp(&s, &before, sizeof s) == 0,
                   "refused recipe statistics without a message, or with output");
    } else {
        char *json = fpk_recipe_stats_to_json(&s);
        fuzz_check(json != NULL, "accepted recipe statistics cannot be written");
        memset(&t, 0, sizeof t);
        fuzz_check(fpk_recipe_stats_from_json(&t, json, &err) == FPK_OK,
                   "written recipe statistics do not read back");
        char *again = fpk_recipe_stats_to_json(&t);
        fuzz_check(again && strcmp(json, again) == 0,
                   "written recipe statistics do not read back the same");
        free(again);
        free(json);
    }
    free(text);
    return 0;
}
