// Package afteraction writes the after-action report of a reconnect
// audit: one self-contained HTML file a reviewer opens offline in any
// browser, and shares as the record of an incident review.
//
// # Contents
//
// The page states what was analysed (the inputs with their accounting of
// lines, the verification of the dataset, the policy, declared or
// inferred), each incident as the check infers it (the loss, the broker's
// return, recovery p50/p90/p99, the connect peak), the fleet's activity
// over time, the distribution of times to recover, the worst devices, the
// findings with their explanations, a replay's comparison when one is
// given, and the timelines of the devices the findings concern.
//
// # Charts
//
// The charts are drawn with gonum.org/v1/plot and written as inline SVG
// (vg/vgsvg, fonts not embedded: the text names Liberation Sans and falls
// back to Arial or the browser's sans-serif):
//
//   - activity: socket-opens per bucket stacked by outcome (connected,
//     refused, failed, no outcome), connects (connected records) as a
//     line, the declared connect budget as a dashed line, and each
//     incident's loss (solid) and the broker's return (dotted). Buckets
//     are the narrowest of analyze.BucketWidths, at least 1 s, that cover
//     the span in MaxBuckets; one chart for the whole log, one for each
//     of the first Options.Incidents incidents;
//   - time to recover: the cumulative distribution of every loss's time
//     to recover, and of each incident's when there are several;
//   - the worst devices (Worst): one row each, sessions as bars and
//     socket-opens as glyphs by outcome, thinned to one glyph per outcome
//     in each of 300 columns;
//   - findings per rule, coloured by severity.
//
// # Size
//
// The page's size is bounded by Options, not by the fleet: PerRule
// findings per rule, Timelines devices of at most Rows records each,
// Worst devices in the table and strip chart, and charts of at most
// MaxBuckets buckets. The findings not shown are counted, with the
// command that lists them.
//
// # Safety
//
// Every value goes through html/template. The page has a Content
// Security Policy that allows no fetch and no script
// (default-src 'none'; inline styles and data: images only), so an
// injected tag could neither run nor call out even if escaping failed.
package afteraction
