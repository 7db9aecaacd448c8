"""glidepath: an HLA (IEEE 1516-2010) run-time infrastructure, from Python.

Create an :class:`Rti` (in-process by default, or over NATS), create or join a
federation execution with a :class:`FederateAmbassador` subclass that receives the
callbacks, and call the HLA services on the :class:`Federate` it returns. Handles are
``int``; attribute and parameter values are ``dict[int, bytes]``; logical times are
``float`` (HLAfloat64Time) or ``int`` (HLAinteger64Time). :meth:`Federate.encode`
and :meth:`Federate.decode` (and their ``_attribute``/``_parameter`` forms) turn
Python values into the HLA encodings of the FOM's data types and back: ``float`` for
``HLAfloat64BE``, ``str`` for ``HLAunicodeString``, ``dict`` for a fixed record,
``list`` for an array. Errors are the HLA exceptions, all subclasses of
:class:`RTIexception`.

Next to the RTI, :class:`Bus` is the group-communication bus of the formation-flying
testbed: :class:`BusMessage` values in the paper's XML on dot-delimited subjects,
published with one of Spread's six service levels and received through a
:class:`BusSubscription`. :mod:`glidepath.tg` is a station of a running target
generator: its aircraft's states, its controls (pause, resume, rate, speed, load a
scenario) and pilot commands with their acknowledgements.
"""

from glidepath import _glidepath
from glidepath._glidepath import *  # noqa: F401,F403  (the classes and exceptions)
from glidepath._glidepath import __version__
from glidepath.ambassador import FederateAmbassador

__all__ = [
    "__version__",
    "Rti",
    "Federate",
    "FederateAmbassador",
    "ExecutiveServer",
    "MessageInfo",
    "ProcessModel",
    "ResignAction",
    "Bus",
    "BusMessage",
    "BusSubscription",
    "BusDelivery",
    "BusMembership",
] + [name for name in dir(_glidepath) if isinstance(getattr(_glidepath, name), type)
     and issubclass(getattr(_glidepath, name), BaseException)]
