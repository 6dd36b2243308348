package shell

import "testing"

// TestWholesale: absurd whatever the form (issue 11, mechanism 5), and
// the look-alikes that must not be blocked.
func TestWholesale(t *testing.T) {
	run(t, []tcase{
		// find over the whole tree, whatever its name test.
		{"find / by name -delete", "find / -name '*.log' -delete", absurd, ""},
		{"find / -exec shred", "find / -type f -exec shred -u {} +", absurd, ""},
		{"find /* -execdir rm", "find /* -iname '*.bak' -execdir rm -f {} \\;", absurd, ""},
		{"find /var/log cleanup stays a danger", "find /var/log -name '*.gz' -mtime +30 -delete", danger, ""},
		// Wrappers the table does not know.
		{"nsenter into pid 1", "nsenter -t 1 -m -u -i -n -p rm -rf /", absurd, ""},
		{"proxychains", "proxychains4 -q kubectl delete ns prod", danger, ""},
		{"firejail", "firejail --quiet mkfs.ext4 /dev/sdb", absurd, ""},
		{"strace", "strace -f -o /tmp/t rm -rf /home", absurd, ""},
		{"sshpass", "sshpass -p x ssh host 'reboot'", danger, ""},
		{"unknown wrapper of a look", "mywrap uptime", unknown, "unknown command"},
		// Disks by every name, and the tools that wipe them.
		{"27th disk", "dd if=/dev/zero of=/dev/sdab bs=1M", absurd, ""},
		{"nvme namespace", "mkfs.xfs -f /dev/nvme1n1", absurd, ""},
		{"nvme controller format", "nvme format /dev/nvme0 --ses=1", absurd, ""},
		{"LVM path", "mkfs.ext4 /dev/vg0/data", absurd, ""},
		{"mapper path redirect", "cat /dev/zero > /dev/mapper/vg0-root", absurd, ""},
		{"by-id link", "wipefs -a /dev/disk/by-id/nvme-Samsung_SSD_970", absurd, ""},
		{"md array", "mdadm --zero-superblock /dev/md0", absurd, ""},
		{"luksFormat", "cryptsetup luksFormat /dev/sdb1", absurd, ""},
		{"blkdiscard", "blkdiscard /dev/nvme0n1", absurd, ""},
		{"hdparm secure erase", "hdparm --security-erase pw /dev/sda", absurd, ""},
		{"mkfs of a variable", `mkfs.ext4 "$DEV"`, absurd, ""},
		{"dd onto /dev/ of a variable", `dd if=img of=/dev/$DISK bs=4M`, absurd, ""},
		{"redirect onto /dev/ of a variable", `cat img > "/dev/${DISK}"`, absurd, ""},
		{"dd of a variable file stays a danger", `dd if=/dev/zero of="$FILE" bs=1M count=1`, danger, ""},
		{"lsblk stays a look", "lsblk -f /dev/nvme0n1", readOnly, ""},
		{"redirect to /dev/null stays harmless", "uptime > /dev/null", readOnly, ""},
		// Fork bombs of any loop shape.
		{"while [ 1 ]", "while [ 1 ]; do sh -c 'x' & done", absurd, "fork bomb"},
		{"for ((;;))", "for ((;;)); do $0 & done", absurd, "fork bomb"},
		{"until false", "until false; do bash & done", absurd, ""},
		{"while sleep", "while sleep 0; do yes > /dev/null & done", absurd, ""},
		{"while ((1))", "while ((1)); do :& done", absurd, ""},
		{"a finite background loop is no bomb", "for i in 1 2 3; do sleep 1 & done; wait", readOnly, ""},
		// Shell HTTP clients aimed at metadata.
		{"curl metadata", "curl -s http://169.254.169.254/latest/meta-data/iam/security-credentials/", absurd, "metadata"},
		{"curl metadata without a scheme", "curl 169.254.169.254/latest/api/token -X PUT", absurd, ""},
		{"wget google metadata", "wget -qO- --header 'Metadata-Flavor: Google' http://metadata.google.internal/computeMetadata/v1/", absurd, ""},
		{"curl nip.io", "curl http://169.254.169.254.nip.io/latest/", absurd, ""},
		{"curl --resolve", "curl --resolve x.example:80:169.254.169.254 http://x.example/", absurd, ""},
		{"nc to metadata", "nc 169.254.169.254 80", absurd, ""},
		{"curl an ordinary host", "curl -s https://status.example.com/health", unknown, ""},
	})
}
