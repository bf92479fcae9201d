/* Batch inputs and outputs: expanding -i arguments (paths, globs, directories,
 * @LIST, '-'), output templates, stable shards, and the output collision check. */
#ifndef VKIMG_CLI_INPUTS_H
#define VKIMG_CLI_INPUTS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strvec {
    char **v;
    int n, cap;
} strvec;

/* 0, or -1 when out of memory. */
int sv_push(strvec *s, const char *str);
void sv_free(strvec *s);

/* Expands one -i argument into paths (appended to out). Returns 0 or an exit
 * code (the message printed). */
int cli_expand_input(const char *arg, bool recursive, strvec *out);
/* True if the -i argument names one file (not a glob, list, '-' or directory). */
bool cli_input_is_single(const char *arg);

/* Output path of input `in` (its index idx) under template t with {dir} {name}
 * {stem} {ext} {index} ({level} stays: mipmap levels fill it when they are
 * written): 0, -1 for an unknown {field}, -2 when it does not fit. */
int cli_expand_template(const char *t, const char *in, int idx, char *buf, size_t n);

/* The stable shard (0..nshards-1) of a path: FNV-1a of its bytes. */
unsigned cli_shard_of(const char *path, unsigned nshards);

/* Two of the n outputs that are the same path (indices into outs), if any:
 * returns true with *a < *b. O(n log n). */
bool cli_find_collision(char *const *outs, int n, int *a, int *b);

#endif
