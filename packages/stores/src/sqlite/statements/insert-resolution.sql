-- One resolution entry, in the transaction of the resolution itself.
INSERT INTO {{resolutions_table}}
  (tenant, "key", tool, action, from_state, fence, attempt, error_type, error_message,
   resolved_by, reason, resolved_at_ms, expires_at_ms, forced)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);
