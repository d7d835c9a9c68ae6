-- Closes the `journal` CTE opened by resolve-journal-open.sql: the entry is written on the same
-- condition as the change, in the same statement.
  FROM current
  WHERE EXISTS (SELECT 1 FROM resolvable)
)
