-- The retention purge takes the oldest deletions by their change's seq (`deleted_seq`, already
-- indexed for the trash's pages), and of those the ones deleted long enough ago: every deletion
-- wrote an entry to an index by time that only that purge read (docs/performance.md).
DROP INDEX trashed_books_by_age;
