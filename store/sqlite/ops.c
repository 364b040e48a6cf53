/* ops.c: the SQLite backend's table of operations (store_internal.h says
 * what each entry does); every entry is filled: a file does all a store
 * does but push, whose entry belongs to the store that receives. */
#include "sqlite_internal.h"

const tl_store_ops tl__sqlite_ops = {
    .name = "SQLite file",
    .open = tl__sqlite_open,
    .close = tl__sqlite_close,
    .schema_version = tl__sqlite_schema_version,
    .read_begin = tl__sqlite_read_begin,
    .read_end = tl__sqlite_read_end,
    .read_cache = tl__sqlite_read_cache,
    .sessions = tl__sqlite_sessions,
    .has_session = tl__sqlite_has_session,
    .labels = tl__sqlite_labels,
    .label_delays = tl__sqlite_label_delays,
    .scan_blocks = tl__sqlite_scan_blocks,
    .facts = tl__sqlite_facts,
    .tags = tl__sqlite_tags,
    .details_of = tl__sqlite_details_of,
    .hosts = tl__sqlite_hosts,
    .summary_blobs = tl__sqlite_summary_blobs,
    .cause_rows = tl__sqlite_cause_rows,
    .writer_begin = tl__sqlite_writer_begin,
    .write_begin = tl__sqlite_write_begin,
    .write_end = tl__sqlite_write_end,
    .put_cause_row = tl__sqlite_put_cause_row,
    .recover_stale = tl__sqlite_recover_stale,
    .import = tl__sqlite_import,
    .merge = tl__sqlite_merge,
    .info = tl__sqlite_info,
    .check = tl__sqlite_check,
    .delete_session = tl__sqlite_delete,
    .prune = tl__sqlite_prune,
    .vacuum = tl__sqlite_vacuum,
};
