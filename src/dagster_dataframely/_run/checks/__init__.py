"""The check kinds: what each declares, the history it reads, how it judges a run and reports."""
