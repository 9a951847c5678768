package ingest

// MemoryLimit is the soft limit of the Go runtime's memory (see
// runtime/debug.SetMemoryLimit) that a program should run Run and Scan
// under when none is set (no GOMEMLIMIT). What an ingest holds is
// bounded by design: two sort chunks while reading, and while writing
// each partition's merge buffers, batches and Parquet writer, about 160
// MB on 20 million lines. Without a limit the collector lets the heap
// grow to twice what it holds before it collects (GOGC=100), which
// took a 20M-line ingest to 430 MB; with it, the heap stays near what is
// held, at the cost of a few more collections.
//
// Run and Scan do not set it: the memory limit is the process's, and
// the program's to choose. stormaudit's commands that ingest set it for
// the ingest's duration unless a limit is set.
const MemoryLimit = 240 << 20
