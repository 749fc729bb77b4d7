"""The cutune.v1 messages and the Tuner service's methods, built at import time.

protoc writes a FileDescriptorSet (cutune_v1.desc) at build time: into the wheel by setup.py,
into the build tree's python/cutune/ by CMake. The message classes are made from it in a
private descriptor pool, not taken from protoc's Python gencode: gencode from one protoc can be
refused by a much newer (or older) protobuf runtime, while a descriptor set is plain data that
every runtime since 3.20 reads. Methods are called through channel.unary_unary with the
service's own descriptor, so no grpc_python_plugin stubs are needed either.
"""

import os

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

DESCRIPTOR_FILE = "cutune_v1.desc"
PROTO_FILE = "cutune/v1/cutune.proto"
SERVICE = "cutune.v1.Tuner"


def find_descriptor_set(package_path):
    """The first cutune_v1.desc among the package's directories (the package itself, then any
    python/cutune/ of a build tree on sys.path)."""
    for directory in package_path:
        path = os.path.join(directory, DESCRIPTOR_FILE)
        if os.path.isfile(path):
            return path
    raise ImportError(
        f"cutune: no {DESCRIPTOR_FILE} in {list(package_path)}: install the package "
        "(pip install ./client/python) or put a build tree's python/ directory on PYTHONPATH "
        "(PYTHONPATH=client/python:build/python after `cmake --build build`)")


class _Protos:
    """Message classes by short name (protos.GetBestConfigRequest, ...) and the service."""

    def __init__(self, path):
        with open(path, "rb") as f:
            files = descriptor_pb2.FileDescriptorSet.FromString(f.read())
        self.pool = descriptor_pool.DescriptorPool()
        for file_proto in files.file:
            self.pool.AddSerializedFile(file_proto.SerializeToString())
        self._factory = None
        self._classes = {}
        self.file = self.pool.FindFileByName(PROTO_FILE)
        self.service = self.pool.FindServiceByName(SERVICE)
        for name, descriptor in self.file.message_types_by_name.items():
            setattr(self, name, self.message_class(descriptor))

    def message_class(self, descriptor):
        cls = self._classes.get(descriptor.full_name)
        if cls is None:
            get_message_class = getattr(message_factory, "GetMessageClass", None)
            if get_message_class is not None:  # newer runtimes; GetPrototype is deprecated there
                cls = get_message_class(descriptor)
            else:  # older ones (Debian 12's 3.21): one factory, so nested types agree
                if self._factory is None:
                    self._factory = message_factory.MessageFactory(self.pool)
                cls = self._factory.GetPrototype(descriptor)
            self._classes[descriptor.full_name] = cls
        return cls

    def unary(self, channel, method_name):
        """A callable for one unary method of the service on `channel`."""
        method = self.service.methods_by_name[method_name]
        if method.client_streaming or method.server_streaming:
            raise ValueError(f"{SERVICE}/{method_name} is a streaming method")
        return channel.unary_unary(
            f"/{self.service.full_name}/{method.name}",
            request_serializer=self.message_class(method.input_type).SerializeToString,
            response_deserializer=self.message_class(method.output_type).FromString)

    def enum_label(self, enum_descriptor, number, prefix):
        """A value's name without its type prefix, lower case: RUNG_EXACT -> "exact"."""
        value = enum_descriptor.values_by_number.get(number)
        if value is None:
            return f"unknown({number})"
        name = value.name
        return (name[len(prefix):] if name.startswith(prefix) else name).lower()


_protos = None


def load(package_path):
    global _protos
    if _protos is None:
        _protos = _Protos(find_descriptor_set(package_path))
    return _protos
