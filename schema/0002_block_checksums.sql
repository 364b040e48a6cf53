-- tl schema, version 2: every sample block starts with a header (its codec,
-- its sample count and a CRC32C checksum over the header, seq, min_ns, max_ns
-- and the data; see docs/schema.md), verified whenever the block is read.
-- Blocks written before carry none. tl_block_upgrade_v1, a function tl
-- registers on its own connections, gives one to each block that decodes to
-- its count samples between its min_ns and max_ns; a block that does not is
-- left as it was, so that it fails its checksum when read, as it failed to
-- decode before. Applied by tl on open, never by hand.
UPDATE sample_blocks SET data = tl_block_upgrade_v1(seq, count, min_ns, max_ns, data)
WHERE codec = 1;
