"""The Reading page (NarrativeXL reading questions)."""
