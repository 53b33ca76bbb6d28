"""Attribute text engine: free text ↔ the 18-attribute ontology (docs/text-conventions.md, docs/methods.md §1.1).

``parser.parse`` reads the attributes a description states; ``generator.describe`` and friends write
descriptions that state exactly a chosen set of attributes.
"""
