/* strpool.c: strings kept once each. A list of a fleet's sessions repeats
 * its labels, probes, hosts, commands, versions and fact values thousands
 * of times; a malloc'd copy of each cost a report more than a kilobyte a
 * session. A pool holds one copy of each distinct string, packed into
 * large chunks, and a hash table of them (open addressing, at most half
 * full); everything goes at once with the pool. Strings known to be unique
 * (a session's UUIDs) are only copied into the chunks: hashing them would
 * find nothing to share; strings that may be (command lines) are copied so
 * once the look-ups stop finding them (tl_strpool_get_maybe).
 *
 * Each slot keeps its string's hash and length beside the pointer, so a
 * probe and a growth of the table compare and move slots without reading
 * the strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tl_base.h"

enum { CHUNK = 64 * 1024 };

typedef struct chunk {
  struct chunk *next;
  size_t used, size;
  char bytes[];
} chunk;

typedef struct {
  char *s; /* NULL where empty */
  uint32_t hash;
  uint32_t len; /* UINT32_MAX for this length or longer */
} slot;

struct tl_strpool {
  chunk *chunks; /* the newest first */
  slot *slots;   /* cap entries */
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

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdu;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53u;
  return h ^ (h >> 33);
}

uint64_t tl_hash_bytes(uint64_t seed, const void *bytes, size_t len) {
  const unsigned char *s = bytes;
  uint64_t h = (seed ^ len) * 0x9e3779b97f4a7c15u, w;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15u;
    h ^= h >> 29;
  }
  if (i < len) {
    w = 0;
    memcpy(&w, s + i, len - i);
    h = (h ^ w) * 0x9e3779b97f4a7c15u;
  }
  return mix(h);
}

static uint32_t hash(const char *s, size_t len) {
  return (uint32_t)(tl_hash_bytes(0, s, len) >> 32);
}

static int same(const slot *x, const char *s, size_t len, uint32_t h) {
  if (x->hash != h || x->len != (len < UINT32_MAX ? len : UINT32_MAX))
    return 0;
  if (len < UINT32_MAX) /* both hold len bytes: no need to look for an end */
    return memcmp(x->s, s, len) == 0;
  return strncmp(x->s, s, len) == 0 && x->s[len] == '\0';
}

/* The slot of s: where it is, or the empty one where it would go. */
static size_t slot_of(const tl_strpool *p, const char *s, size_t len, uint32_t h) {
  size_t i = h & (p->cap - 1);
  while (p->slots[i].s && !same(&p->slots[i], s, len, h))
    i = (i + 1) & (p->cap - 1);
  return i;
}

static int grow(tl_strpool *p) {
  size_t cap = p->cap ? p->cap * 2 : 1024;
  slot *old = p->slots, *slots = calloc(cap, sizeof *slots);
  if (!slots)
    return -1;
  for (size_t i = 0; i < p->cap; i++)
    if (old[i].s) {
      size_t at = old[i].hash & (cap - 1);
      while (slots[at].s)
        at = (at + 1) & (cap - 1);
      slots[at] = old[i];
    }
  free(old);
  p->slots = slots;
  p->cap = cap;
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

char *tl_strpool_add(tl_strpool *p, const char *s, size_t len) {
  char *copy = room(p, len + 1);
  if (copy) {
    memcpy(copy, s, len);
    copy[len] = '\0';
  }
  return copy;
}

char *tl_strpool_get_len(tl_strpool *p, const char *s, size_t len) {
  if ((p->count + 1) * 2 > p->cap && grow(p))
    return NULL;
  uint32_t h = hash(s, len);
  size_t i = slot_of(p, s, len, h);
  if (p->slots[i].s)
    return p->slots[i].s;
  char *copy = tl_strpool_add(p, s, len);
  if (!copy)
    return NULL;
  p->count++;
  p->slots[i] = (slot){copy, h, len < UINT32_MAX ? (uint32_t)len : UINT32_MAX};
  return copy;
}

char *tl_strpool_get_maybe(tl_strpool *p, tl_strpool_odds *o, const char *s, size_t len) {
  enum { TRIAL = 1024, ODDS = 16 };
  if (o->looked >= TRIAL && o->found * ODDS < o->looked && ++o->skipped % ODDS)
    return tl_strpool_add(p, s, len);
  size_t known = p->count;
  char *kept = tl_strpool_get_len(p, s, len);
  o->looked++;
  o->found += kept && p->count == known;
  return kept;
}

char *tl_strpool_get(tl_strpool *p, const char *s) { return tl_strpool_get_len(p, s, strlen(s)); }
