"""placeholder; replaced by the messages stream handler."""
