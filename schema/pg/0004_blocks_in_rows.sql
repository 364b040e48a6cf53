-- tl server schema, version 4: a block kept in its row when the row fits in
-- a page (a block of up to about 3,500 samples), where PostgreSQL would have
-- moved any value past 2 kB out to TOAST. Reading a block from TOAST costs
-- the server an index look-up and a row per 2 kB more; a fleet of short
-- sessions (one small block each) read twice as fast without it. Blocks
-- pushed before stay where they are until the table is rewritten (as its
-- owner: VACUUM FULL sample_blocks). The most a row may hold is the page
-- less 32 bytes (8160 in the usual 8 kB page).
DO $$
BEGIN
  EXECUTE format('ALTER TABLE sample_blocks SET (toast_tuple_target = %s)',
                 current_setting('block_size')::int - 32);
END
$$;
