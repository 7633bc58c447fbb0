/* --recipe and --recipes (recipes.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "recipes.h"

static bool is_preset(const char *word, size_t len)
{
    for (const char *const *p = fpk_recipe_presets; *p; p++)
        if (strlen(*p) == len && strncasecmp(*p, word, len) == 0)
            return true;
    return false;
}

char *cli_recipe_name(const char *given, const fpk_recipe *r)
{
    if (is_preset(given, strlen(given)))
        return cli_strf("%s", given);
    char buf[256];
    fpk_recipe_format(r, buf, sizeof buf);
    return cli_strf("%s", buf);
}

/* Adds the recipe spelled [S, S+LEN) to C, unless C holds it already. */
static void add_recipe(const char *opt, const char *s, size_t len, cli_common *c)
{
    char *text = cli_strf("%.*s", (int)len, s);
    fpk_recipe r;
    fpk_error err = {0};
    if (fpk_recipe_parse(text, &r, &err) != FPK_OK)
        cli_die(CLI_EXIT_USAGE, "option %s: %s", opt, err.msg);
    char *name = cli_recipe_name(text, &r);
    free(text);
    for (int i = 0; i < c->nrecipes; i++)
        if (strcmp(c->recipe_names[i], name) == 0) {
            free(name);
            return;
        }
    if (c->nrecipes == CLI_MAX_RECIPES)
        cli_die(CLI_EXIT_USAGE, "option %s: at most %d recipes", opt, CLI_MAX_RECIPES);
    c->recipes[c->nrecipes] = r;
    c->recipe_names[c->nrecipes++] = name;
}

/* The words of LIST that begin a recipe: a preset, or a spelled-out one. */
static bool begins_recipe(const char *word, size_t len)
{
    return is_preset(word, len) || memchr(word, '/', len) != NULL;
}

static void add_list(const char *opt, const char *list, bool many, cli_common *c);

/* Adds the recipe that begins at word S (its options to END). */
static void add_word(const char *opt, const char *s, size_t len, bool many, cli_common *c)
{
    if (many && len == 8 && strncasecmp(s, "standard", len) == 0)
        add_list(opt, CLI_STANDARD_RECIPES, true, c);
    else if (many && len == 3 && strncasecmp(s, "all", len) == 0)
        for (const char *const *p = fpk_recipe_presets; *p; p++)
            add_recipe(opt, *p, strlen(*p), c);
    else
        add_recipe(opt, s, len, c);
}

static void add_list(const char *opt, const char *list, bool many, cli_common *c)
{
    if (!many) { /* the last --recipe given */
        for (int i = 0; i < c->nrecipes; i++)
            free(c->recipe_names[i]);
        c->nrecipes = 0;
        add_recipe(opt, list, strlen(list), c);
        return;
    }
    const char *start = list;
    for (const char *p = list;; p++) {
        if (*p != ',' && *p)
            continue;
        const char *next = *p ? p + 1 : p;
        size_t nlen = strcspn(next, ",");
        /* the recipe ends where the next word begins another */
        if (!*p || begins_recipe(next, nlen) ||
            (nlen == 8 && strncasecmp(next, "standard", 8) == 0) ||
            (nlen == 3 && strncasecmp(next, "all", 3) == 0)) {
            if (p == start)
                cli_die(CLI_EXIT_USAGE, "option %s: an empty recipe in \"%s\"", opt, list);
            add_word(opt, start, (size_t)(p - start), many, c);
            start = next;
        }
        if (!*p)
            break;
    }
}

void cli_parse_recipes(const char *opt, const char *list, bool many, cli_common *c)
{
    add_list(opt, list, many, c);
}
