/* A small, bounded JSON reader (RFC 8259) for the command line's inputs (the
 * compare server's requests). Strict: one value and only whitespace around it,
 * no comments, no trailing commas, strings of valid UTF-8 (escapes decoded,
 * surrogate pairs joined, lone surrogates refused), numbers of JSON's grammar.
 * Bounded: the nesting depth and the number of values are capped, and all
 * memory is two allocations sized from the input's length; never reads past
 * len (the text need not be NUL-terminated). Depends on nothing but libc. */
#ifndef VKIMG_CLI_JSONR_H
#define VKIMG_CLI_JSONR_H

#include <stdbool.h>
#include <stddef.h>

typedef enum jr_type { JR_NULL, JR_FALSE, JR_TRUE, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT } jr_type;

typedef struct jr_val {
    jr_type type;
    const char *key;       /* the member's name in an object (decoded, NUL-terminated), else NULL */
    size_t key_len;
    const char *str;       /* JR_STRING: decoded UTF-8, NUL-terminated (may hold \u0000: see len) */
    size_t len;
    double num;            /* JR_NUMBER */
    bool is_int;           /* JR_NUMBER without fraction or exponent that fits in long long */
    long long i;           /* ... its value */
    int n;                 /* JR_ARRAY / JR_OBJECT: the number of elements / members */
    struct jr_val *child;  /* the first of them */
    struct jr_val *next;   /* the next element or member of the parent */
} jr_val;

typedef struct jr_limits {
    int max_depth;  /* arrays and objects inside each other (default 32) */
    int max_values; /* values in the document (default 65536) */
} jr_limits;

typedef struct jr_doc {
    jr_val *root;
    char err[160]; /* why parsing failed, with the byte offset */
    /* private */
    jr_val *vals;
    int nvals, maxvals;
    char *strs;
    size_t slen;
} jr_doc;

/* Parses text[0..len): 0 with d->root, or -1 with d->err. lim may be NULL.
 * Free with jr_free either way. */
int jr_parse(jr_doc *d, const char *text, size_t len, const jr_limits *lim);
void jr_free(jr_doc *d);

/* The member `key` of an object (the last one of that name), or NULL (also
 * when obj is not an object). */
const jr_val *jr_get(const jr_val *obj, const char *key);
/* "null", "boolean", "number", "string", "array", "object" */
const char *jr_type_name(jr_type t);

#endif
