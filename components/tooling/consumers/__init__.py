"""`python -m components consumers STACK --for TOOL`: ready-to-paste settings for GPU pools.

One module per tool (`pod`, `fiftyone`, `flyte`, `jupyterhub`), what they share (`shared`,
`sizing`), and the command (`command`). Each tool gets the pools' scheduling in the format its
own documentation gives, cited next to each format; every emitted setting is what `fit` accepts
for its pool (the tests convert each one back to the pod the tool creates and check it).
"""
