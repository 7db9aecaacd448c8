"""Type stubs of the glidepath package: the native module's names and the ambassador."""

from glidepath._glidepath import *  # noqa: F401,F403
from glidepath._glidepath import __version__ as __version__
from glidepath.ambassador import FederateAmbassador as FederateAmbassador
