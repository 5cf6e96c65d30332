"""The split family: a frame's rows run through the rules, in memory, streamed or as a Collection."""
