"""What a closed quest teaches: a lesson written by questbot's model from the quest's record,
kept only when a consolidation review founds it, and given to later stages' agents."""
