"""Model backends. Heavy libraries (torch, transformers) are imported only when one is built."""
