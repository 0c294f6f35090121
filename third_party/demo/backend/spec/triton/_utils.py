"""Added to triton._utils through spec_func("apply_with_path")."""


def apply_with_path(container, path, function):
    """Replace the value at a nested index path of lists/dicts by function(value); returns container."""
    *parents, last = path
    holder = container
    for index in parents:
        holder = holder[index]
    holder[last] = function(holder[last])
    return container
