"""The split family: a frame's rows through the rules, in memory, streamed or as a Collection."""
