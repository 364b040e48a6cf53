/* strpool.c: strings kept once each. A list of a fleet's sessions repeats
 * its labels, probes, hosts, commands, versions and fact values thousands
 * of times; a malloc'd copy of each cost a report more than a kilobyte a
 * session. A pool holds one copy of each distinct string, packed into
 * large chunks, and a hash table of them (open addressing, at most half
 * full); everything goes at once with the pool. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_store.h"

enum { CHUNK = 64 * 1024 };

typedef struct chunk {
  struct chunk *next;
  size_t used, size;
  char bytes[];
} chunk;

struct tl_strpool {
  chunk *chunks; /* the newest first */
  char **slots;  /* cap entries, NULL where empty */
  size_t cap, count;
};

tl_strpool *tl_strpool_new(void) { return calloc(1, sizeof(tl_strpool)); }

void tl_strpool_free(tl_strpool *p) {
  if (!p)
    return;
  for (chunk *c = p->chunks, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(p->slots);
  free(p);
}

/* FNV-1a: short strings, and no attacker who chooses them to collide
 * would gain more than a slower report. */
static uint64_t hash(const char *s, size_t len) {
  uint64_t h = 14695981039346656037u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 1099511628211u;
  return h;
}

/* The slot of s: where it is, or the empty one where it would go. */
static size_t slot_of(const tl_strpool *p, const char *s, size_t len) {
  size_t i = (size_t)hash(s, len) & (p->cap - 1);
  while (p->slots[i] && (strncmp(p->slots[i], s, len) != 0 || p->slots[i][len] != '\0'))
    i = (i + 1) & (p->cap - 1);
  return i;
}

static int grow(tl_strpool *p) {
  size_t cap = p->cap ? p->cap * 2 : 1024;
  char **old = p->slots, **slots = calloc(cap, sizeof *slots);
  if (!slots)
    return -1;
  size_t old_cap = p->cap;
  p->slots = slots;
  p->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i])
      p->slots[slot_of(p, old[i], strlen(old[i]))] = old[i];
  free(old);
  return 0;
}

/* Room for n bytes in the newest chunk, or a new one. */
static char *room(tl_strpool *p, size_t n) {
  chunk *c = p->chunks;
  if (!c || c->size - c->used < n) {
    size_t size = n > CHUNK ? n : CHUNK;
    if (!(c = malloc(sizeof *c + size)))
      return NULL;
    c->size = size;
    c->used = 0;
    c->next = p->chunks;
    p->chunks = c;
  }
  char *at = c->bytes + c->used;
  c->used += n;
  return at;
}

char *tl_strpool_get_len(tl_strpool *p, const char *s, size_t len) {
  if ((p->count + 1) * 2 > p->cap && grow(p))
    return NULL;
  size_t i = slot_of(p, s, len);
  if (p->slots[i])
    return p->slots[i];
  char *copy = room(p, len + 1);
  if (!copy)
    return NULL;
  memcpy(copy, s, len);
  copy[len] = '\0';
  p->count++;
  return p->slots[i] = copy;
}

char *tl_strpool_get(tl_strpool *p, const char *s) { return tl_strpool_get_len(p, s, strlen(s)); }
