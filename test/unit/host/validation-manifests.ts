/**
 * @module Realistic metal3 manifests as users write them (shapes from metal3-dev-env's
 * generated `bmhosts_crs.yaml`, the BMO docs and Cluster API deployments), as YAML text, for
 * the validation tests. Every document here must be accepted.
 */
import { parseAllDocuments } from 'yaml';

/** metal3-dev-env: one IPMI (VirtualBMC) node and one Redfish virtual-media node with their BMC secrets. */
export const DEV_ENV_MANIFEST = `
---
apiVersion: v1
kind: Secret
metadata:
  name: node-0-bmc-secret
  namespace: metal3
type: Opaque
data:
  username: YWRtaW4=
  password: cGFzc3dvcmQ=
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-0
  namespace: metal3
spec:
  online: true
  bootMACAddress: 00:5c:52:31:3a:9c
  bootMode: legacy
  bmc:
    address: ipmi://192.168.111.1:6230
    credentialsName: node-0-bmc-secret
---
apiVersion: v1
kind: Secret
metadata:
  name: node-1-bmc-secret
  namespace: metal3
type: Opaque
stringData:
  username: admin
  password: password
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: node-1
  namespace: metal3
  labels:
    cluster.x-k8s.io/cluster-name: test1
    infraenv: edge
spec:
  online: true
  bootMACAddress: 00:5c:52:31:3a:ad
  bmc:
    address: redfish-virtualmedia+http://192.168.111.1:8000/redfish/v1/Systems/a7b8c3d2-0a5e-4f4e-9d5b-1c2d3e4f5a6b
    credentialsName: node-1-bmc-secret
    disableCertificateVerification: true
  rootDeviceHints:
    deviceName: /dev/sda
  automatedCleaningMode: disabled
`;

/** A fuller production-style host: provisioned image, cloud-init secrets, hints, hardware RAID on iDRAC. */
export const PRODUCTION_MANIFEST = `
apiVersion: v1
kind: Secret
metadata:
  name: worker-3-user-data
  namespace: edge-rack7
type: Opaque
stringData:
  userData: |
    #cloud-config
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOps ops@example.com
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: worker-3
  namespace: edge-rack7
  annotations:
    reboot.metal3.io/remediation: '{"mode":"hard"}'
spec:
  online: true
  description: R750 in U17, rack 7
  bootMACAddress: B4:96:91:AA:03:10
  bootMode: UEFISecureBoot
  architecture: x86_64
  bmc:
    address: idrac-virtualmedia://10.7.0.17/redfish/v1/Systems/System.Embedded.1
    credentialsName: worker-3-bmc
    disableCertificateVerification: true
  image:
    url: https://images.example.com/ubuntu-22.04-server-cloudimg-amd64.img
    checksum: https://images.example.com/SHA256SUMS
    checksumType: sha256
    format: qcow2
  userData:
    name: worker-3-user-data
    namespace: edge-rack7
  networkData:
    name: worker-3-network-data
  rootDeviceHints:
    model: PERC H755
    minSizeGigabytes: 200
    rotational: false
  raid:
    hardwareRAIDVolumes:
      - name: os
        level: "1"
        sizeGibibytes: 400
        controller: RAID.Integrated.1-1
        physicalDisks:
          - Disk.Bay.0:Enclosure.Internal.0-1:RAID.Integrated.1-1
          - Disk.Bay.1:Enclosure.Internal.0-1:RAID.Integrated.1-1
        numberOfPhysicalDisks: 2
      - name: data
        level: "5"
        rotational: true
  consumerRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: Metal3Machine
    name: edge-rack7-md-0-7x2kq
    namespace: edge-rack7
  taints:
    - key: node-role.kubernetes.io/storage
      effect: NoSchedule
      timeAdded: "2024-05-02T10:00:00Z"
`;

/** Less common but valid shapes: software RAID, live ISO, OCI, custom deploy, unmanaged, disabled inspection. */
export const VARIANT_HOSTS = `
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: swraid-0
spec:
  online: true
  bmc:
    address: redfish://10.0.0.5/redfish/v1/Systems/1
    credentialsName: swraid-0-bmc
  raid:
    softwareRAIDVolumes:
      - level: "1"
        rootVolume: true
        physicalDisks:
          - deviceName: /dev/disk/by-path/pci-0000:00:17.0-ata-1
          - deviceName: /dev/disk/by-path/pci-0000:00:17.0-ata-2
      - level: "0"
  image:
    url: http://172.22.0.1/images/CENTOS_9_NODE_IMAGE_K8S_v1.29.0-raw.img
    checksum: 2b7b0e2c1e8b8e6c2d8d1c4ec5f1e7c1f3b6f1a0d5b1e6c9d3f4a2b1c0e9d8f7
    checksumType: auto
    format: raw
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: live-iso-0
spec:
  online: true
  bmc:
    address: redfish-virtualmedia://10.0.0.6/redfish/v1/Systems/1
    credentialsName: live-iso-0-bmc
  image:
    url: https://mirror.example.com/rescue.iso
    format: live-iso
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: oci-0
spec:
  online: true
  bmc:
    address: redfish-virtualmedia://10.0.0.7/redfish/v1/Systems/1
    credentialsName: oci-0-bmc
  image:
    url: oci://registry.example.com/os/ubuntu:24.04
    ociAuthSecretName: registry-pull
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: coreos-0
spec:
  online: true
  bmc:
    address: redfish-virtualmedia://10.0.0.8/redfish/v1/Systems/1
    credentialsName: coreos-0-bmc
  customDeploy:
    method: install_coreos
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: unmanaged-0
spec:
  online: false
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: preinspected-0
  annotations:
    inspect.metal3.io: disabled
    rackside.io/cleaning-mode: erase
    inspect.metal3.io/hardwaredetails: '{"systemVendor":{"manufacturer":"Dell Inc."},"cpu":{"arch":"x86_64","count":32},"ramMebibytes":131072}'
spec:
  online: true
  externallyProvisioned: true
  inspectionMode: disabled
  bootMACAddress: 52:54:00:12:34:56
  bmc:
    address: 192.168.111.1:6231
    credentialsName: preinspected-0-bmc
  disablePowerOff: true
  hardwareProfile: unknown
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: libvirt-0
  namespace: metal3
spec:
  online: true
  bootMACAddress: 00:b2:8c:ee:22:98
  bmc:
    address: libvirt://192.168.122.1/
    credentialsName: libvirt-0-bmc
`;

/** What \`kubectl get bmh node-0 -o yaml\` prints: server-owned metadata and status, to be accepted and ignored. */
export const KUBECTL_GET_OUTPUT = `
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  creationTimestamp: "2024-04-30T08:11:02Z"
  finalizers:
  - baremetalhost.metal3.io
  generation: 3
  name: node-0
  namespace: metal3
  resourceVersion: "123456"
  uid: 0d2f8c41-77a5-4b6a-9d0e-2f4c1b8a9e11
  managedFields:
  - apiVersion: metal3.io/v1alpha1
    fieldsType: FieldsV1
    manager: kubectl-client-side-apply
    operation: Update
spec:
  automatedCleaningMode: metadata
  bmc:
    address: ipmi://192.168.111.1:6230
    credentialsName: node-0-bmc-secret
  bootMACAddress: 00:5c:52:31:3a:9c
  bootMode: legacy
  online: true
status:
  errorCount: 0
  errorMessage: ""
  goodCredentials:
    credentials:
      name: node-0-bmc-secret
      namespace: metal3
    credentialsVersion: "1001"
  hardwareProfile: unknown
  operationalStatus: OK
  poweredOn: true
  provisioning:
    ID: 6b9b3f2e-1c8d-4e2a-8f7a-3a1b2c3d4e5f
    bootMode: legacy
    image:
      url: ""
    state: available
`;

/** Parses multi-document YAML into plain JSON values. */
export function parseManifests(text: string): unknown[] {
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`bad test YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS() as unknown;
  });
}

/** A minimal valid BareMetalHost as a JSON object, for tests that mutate one field. */
export function baseHost(): Record<string, unknown> {
  return {
    apiVersion: 'metal3.io/v1alpha1',
    kind: 'BareMetalHost',
    metadata: { name: 'node-0', namespace: 'metal3' },
    spec: {
      online: true,
      bootMACAddress: '00:5c:52:31:3a:9c',
      bmc: { address: 'redfish-virtualmedia+http://192.168.111.1:8000/redfish/v1/Systems/1', credentialsName: 'node-0-bmc-secret' },
      image: { url: 'http://172.22.0.1/images/node.qcow2', checksum: 'http://172.22.0.1/images/node.qcow2.sha256sum', checksumType: 'sha256', format: 'qcow2' },
    },
  };
}
