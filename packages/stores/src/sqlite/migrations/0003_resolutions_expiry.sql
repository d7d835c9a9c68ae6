-- Migration 0003: an index on the resolution journal's retention deadline, so cleanup()
-- and the sweep of each resolve find expired entries without scanning the journal. Placeholders
-- as in 0002_listing.sql, and:
--   {{resolutions_expires_index}}  journal index on expires_at_ms
CREATE INDEX {{resolutions_expires_index}} ON {{resolutions_table}} (expires_at_ms);
