"""Stage 3, read: documents in bounded time and memory, and which vocabulary a document is written in."""
