"""Attribute evidence as retrieval uses it: every source's evidence for a gallery's items, the model's attribute
heads, agreement with a query, the reliability of each source, readings and their wording, likeness, and the
hybrid ranking's attribute term (docs/methods.md §6–§8)."""
