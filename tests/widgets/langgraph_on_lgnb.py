"""Run LangChain's create_agent on lgnb: `langgraph.X` imports resolve to `lgnb.X` where lgnb
ships that public module (ecosystem packages and private modules stay LangGraph's)."""
import importlib, importlib.abc, importlib.machinery, importlib.util, os, sys

_ROOT = list(importlib.util.find_spec("langgraph").submodule_search_locations)
_KEEP = ("langgraph.prebuilt", "langgraph.checkpoint", "langgraph.store", "langgraph.cache")


def _private_from_langgraph(name):
    """A private name lgnb's module lacks (LangGraph internals that ecosystem code imports)
    comes from LangGraph's own file of that module."""
    def __getattr__(attr):
        if not attr.startswith("_") or attr.startswith("__"):
            raise AttributeError(attr)
        real = sys.modules.get("_lg_real." + name)
        if real is None:
            parts = name.split(".")[1:]
            for root in _ROOT:
                path = os.path.join(root, *parts) + ".py"
                if not os.path.exists(path):
                    path = os.path.join(root, *parts, "__init__.py")
                if os.path.exists(path):
                    spec = importlib.util.spec_from_file_location("_lg_real." + name, path)
                    real = importlib.util.module_from_spec(spec)
                    sys.modules[spec.name] = real
                    spec.loader.exec_module(real)
                    break
        if real is None or not hasattr(real, attr):
            raise AttributeError(attr)
        return getattr(real, attr)
    return __getattr__


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if not name.startswith("langgraph."):
            return None
        if "._" not in name and not name.startswith(_KEEP):
            try:
                twin = importlib.util.find_spec("lgnb" + name[len("langgraph"):])
            except (ImportError, ValueError):
                twin = None
            if twin is not None:
                return importlib.util.spec_from_loader(name, self, is_package=twin.submodule_search_locations is not None)
        # LangGraph's own file, even when the parent package is lgnb's
        parts = name.split(".")[1:]
        return importlib.machinery.PathFinder.find_spec(name, [os.path.join(r, *parts[:-1]) for r in _ROOT])

    def create_module(self, spec):
        module = importlib.import_module("lgnb" + spec.name[len("langgraph"):])
        if "__getattr__" not in vars(module):
            module.__getattr__ = _private_from_langgraph(spec.name)
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Alias())
