#pragma once

namespace ty {

// Tuning knobs of SqliteResultStore; the defaults are what the application
// uses. Metric rows have one insert path (MetricSeriesWriter: libsqlite3 on
// the writer connection's own handle); tests/bench/bench_store measures it
// beside QtSql baselines and the sqlite3 shell.
struct SqliteStoreOptions {
    // Pack metric points into metric_blocks (MetricBlock.h): a bulk write
    // (>= 1,024 points of a series in one transaction) and a series' rows
    // once they make a block of 4,096. false: rows only (older behaviour;
    // tests/bench/bench_store compares both). Readers handle either.
    bool packBlocks = true;
    // SQLite busy timeout of every connection (another process holding the
    // write lock, or a checkpoint), in ms.
    int busyTimeoutMs = 10000;
    // After the first write of an idle period, the writer waits this long (ms)
    // for more before committing, so a burst becomes one transaction.
    // flush(), createRun() and a full queue cut the wait short.
    int coalesceMs = 5;
    // A batch (one transaction) stops taking queued writes once it holds this
    // many metric points, so the write lock is never held for long (another
    // process's createRun() waits for it) and readers see progress.
    int maxBatchPoints = 250'000;
    // Page cache of the writer connection, KiB (SQLite's default is 2000):
    // a batch's pages stay in memory instead of spilling to the WAL mid-transaction.
    int writerCacheKiB = 32 * 1024;
    // Page size of a database this writer creates, bytes (SQLite's default
    // is 4096). 16 KiB: about 20 % less CPU per metric point in bench_store
    // (fewer WAL frame writes). An existing database keeps its page size.
    int pageSize = 16384;
    // WAL pages after which a commit checkpoints (SQLite's default: 1000).
    // Each checkpoint fsyncs the database file; under a stream of large
    // metric batches fewer, larger checkpoints cost less wall time.
    int walAutocheckpointPages = 1000;
    // Metric points queued but not yet committed above which appendMetrics()
    // blocks its caller until the writer catches up (back-pressure).
    int maxPendingPoints = 2'000'000;
};

} // namespace ty
