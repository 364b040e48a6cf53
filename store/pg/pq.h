/* pq.h: the libpq functions the server backend calls, reached through a
 * table that tl__pq_load fills on first use. libpq and what it needs (TLS,
 * Kerberos, LDAP: about twenty shared libraries) cost every tl program a few
 * milliseconds to map and relocate at start, while most runs only ever open
 * a SQLite file; so tl links none of them and loads libpq when a server
 * address is opened. The types and constants still come from libpq-fe.h.
 *
 * After this header, a call such as PQclear(r) goes through the table; the
 * loader (pq.c) defines TL_PQ_LOADER first to see the real names. */
#ifndef TL_PQ_H
#define TL_PQ_H

#include <stddef.h>

#include <libpq-fe.h>

#define TL_PQ_FUNCTIONS(X)                                                                         \
  X(PQclear)                                                                                       \
  X(PQcmdTuples)                                                                                   \
  X(PQconnectdbParams)                                                                             \
  X(PQconninfoFree)                                                                                \
  X(PQconninfoParse)                                                                               \
  X(PQerrorMessage)                                                                                \
  X(PQexec)                                                                                        \
  X(PQexecParams)                                                                                  \
  X(PQfformat)                                                                                     \
  X(PQfinish)                                                                                      \
  X(PQfreemem)                                                                                     \
  X(PQgetResult)                                                                                   \
  X(PQgetisnull)                                                                                   \
  X(PQgetlength)                                                                                   \
  X(PQgetvalue)                                                                                    \
  X(PQntuples)                                                                                     \
  X(PQputCopyData)                                                                                 \
  X(PQputCopyEnd)                                                                                  \
  X(PQresultErrorField)                                                                            \
  X(PQresultStatus)                                                                                \
  X(PQsendQueryParams)                                                                             \
  X(PQsetClientEncoding)                                                                           \
  X(PQsetNoticeProcessor)                                                                          \
  X(PQsetSingleRowMode)                                                                            \
  X(PQstatus)                                                                                      \
  X(PQtransactionStatus)

typedef struct {
#define TL_PQ_POINTER(name) __typeof__(name) *name;
  TL_PQ_FUNCTIONS(TL_PQ_POINTER)
#undef TL_PQ_POINTER
} tl__pq_api;

extern tl__pq_api tl__pq;

/* Loads libpq once per process: TL_OK, or TL_EUNAVAIL with a one-line
 * reason in why (what was tried and how to install it). Safe to call from
 * any thread and again after a failure (which it repeats). The library
 * looked for is $TL_LIBPQ when set, else the libpq tl was built against
 * (its folder first, then the loader's search path). */
int tl__pq_load(char *why, size_t whylen);

#ifndef TL_PQ_LOADER
#define PQclear (*tl__pq.PQclear)
#define PQcmdTuples (*tl__pq.PQcmdTuples)
#define PQconnectdbParams (*tl__pq.PQconnectdbParams)
#define PQconninfoFree (*tl__pq.PQconninfoFree)
#define PQconninfoParse (*tl__pq.PQconninfoParse)
#define PQerrorMessage (*tl__pq.PQerrorMessage)
#define PQexec (*tl__pq.PQexec)
#define PQexecParams (*tl__pq.PQexecParams)
#define PQfformat (*tl__pq.PQfformat)
#define PQfinish (*tl__pq.PQfinish)
#define PQfreemem (*tl__pq.PQfreemem)
#define PQgetResult (*tl__pq.PQgetResult)
#define PQgetisnull (*tl__pq.PQgetisnull)
#define PQgetlength (*tl__pq.PQgetlength)
#define PQgetvalue (*tl__pq.PQgetvalue)
#define PQntuples (*tl__pq.PQntuples)
#define PQputCopyData (*tl__pq.PQputCopyData)
#define PQputCopyEnd (*tl__pq.PQputCopyEnd)
#define PQresultErrorField (*tl__pq.PQresultErrorField)
#define PQresultStatus (*tl__pq.PQresultStatus)
#define PQsendQueryParams (*tl__pq.PQsendQueryParams)
#define PQsetClientEncoding (*tl__pq.PQsetClientEncoding)
#define PQsetNoticeProcessor (*tl__pq.PQsetNoticeProcessor)
#define PQsetSingleRowMode (*tl__pq.PQsetSingleRowMode)
#define PQstatus (*tl__pq.PQstatus)
#define PQtransactionStatus (*tl__pq.PQtransactionStatus)
#endif

#endif
