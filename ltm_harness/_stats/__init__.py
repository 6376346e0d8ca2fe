"""Statistics to compare agents, computed from results (never from report text): bootstrap intervals by question
and by conversation, paired differences and paired tests. See docs/statistics.md."""

from ltm_harness._stats.compute import (METHOD, IntervalRow, OutcomeRow, PairRow, Scored, Statistics,
                                        compute_statistics)

__all__ = ["METHOD", "IntervalRow", "OutcomeRow", "PairRow", "Scored", "Statistics", "compute_statistics"]
