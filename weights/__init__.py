"""Shipped networks (package data).  See README.md here for each file's model card."""
