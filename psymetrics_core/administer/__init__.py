"""administer."""
