/* The recipes a tool is given (--recipe R, --recipes LIST): presets and
 * spelled-out recipes (fpkit-recipes(7)), parsed once for every tool. */
#ifndef FPKIT_RECIPES_H
#define FPKIT_RECIPES_H

#include <stdbool.h>

#include "options.h"

/* The recipes of --recipes standard. */
#define CLI_STANDARD_RECIPES "fp8-tensor-current,fp8-block128,mxfp8-e4m3,mxfp4,nvfp4"

/* Adds the recipes of LIST, the value of option OPT, to C's (a single one
 * unless MANY).  In a list, a word that is a preset or holds a '/' begins
 * a recipe and any other word is an option of the one before
 * ("nvfp4,mxfp4,e4m3/fp32/amax/0x0,margin=1"); "standard" and "all" stand
 * for CLI_STANDARD_RECIPES and every preset.  A recipe given twice is
 * kept once.  Exits with status 2 and fpk_recipe_parse's message on a
 * recipe it cannot read. */
void cli_parse_recipes(const char *opt, const char *list, bool many, cli_common *c);

/* The name a recipe was given as: its preset, else its canonical
 * spelled-out text. */
char *cli_recipe_name(const char *given, const fpk_recipe *r);

#endif
